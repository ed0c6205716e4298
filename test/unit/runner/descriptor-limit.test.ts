import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { RunnerError } from "../../../services/runner/runner-error.js";
import { CONNECTION_DESCRIPTOR_RESERVE, DescriptorLimit, SPAWN_DESCRIPTOR_HEADROOM, type DescriptorSource } from "../../../services/runner/process/descriptor-limit.js";

const LIMITS = "Limit                     Soft Limit           Hard Limit           Units\nMax open files            64                   4096                 files\n";

/** A /proc with `open()` descriptors open (the listing counts its own), and a logger whose lines the test reads. */
function setup(open: () => number, limits: () => string = () => LIMITS) {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: "warn" }, new Writable({ write: (chunk, _, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const source: DescriptorSource = { listOpen: () => Array.from({ length: open() + 1 }, (_, i) => String(i)), readLimits: limits };
  return { limit: new DescriptorLimit(log, source), lines };
}

const forkptyFailed = (): never => {
  throw new Error("forkpty(3) failed.");
};

describe("DescriptorLimit", () => {
  it("counts open descriptors against the soft limit", () => {
    expect(setup(() => 20).limit.usage()).toEqual({ open: 20, limit: 64 });
  });

  it("lets a spawn run while enough are free, and refuses it before it starts when fewer than the headroom are", () => {
    let open = 64 - SPAWN_DESCRIPTOR_HEADROOM;
    const { limit, lines } = setup(() => open);
    expect(limit.spawn(() => "started")).toBe("started");
    open++;
    let started = false;
    expect(() => limit.spawn(() => (started = true))).toThrow(
      new RunnerError("resource_exhausted", `the runner is out of file descriptors: ${open} open, limit 64; close terminals, or raise the runner's open-file limit`),
    );
    expect(started).toBe(false);
    expect(lines).toMatchObject([{ level: 40, open, limit: 64, msg: expect.stringMatching(/^the runner is out of file descriptors/) }]);
  });

  it("answers a spawn that failed for want of descriptors with RESOURCE_EXHAUSTED, and any other failure as it was", () => {
    let open = 10;
    const { limit } = setup(() => open);
    const emfile = Object.assign(new Error("spawn sh EMFILE"), { code: "EMFILE" });
    expect(() => limit.spawn(() => { throw emfile; })).toThrow(/out of file descriptors: 10 open, limit 64/);
    // node-pty says only "forkpty(3) failed.": it is put down to descriptors when few were left after it.
    expect(() => limit.spawn(forkptyFailed)).toThrow("forkpty(3) failed.");
    expect(() =>
      limit.spawn(() => {
        open = 63;
        forkptyFailed();
      }),
    ).toThrow(expect.objectContaining({ kind: "resource_exhausted" }));
  });

  it("counts a /proc listing that itself fails with EMFILE as out of descriptors", () => {
    const { limit } = setup(() => {
      throw Object.assign(new Error("EMFILE"), { code: "EMFILE" });
    });
    expect(limit.usage()).toEqual({ open: 64, limit: 64 });
  });

  it("stays out of the way where /proc cannot tell", () => {
    const { limit } = setup(() => 0, () => {
      throw new Error("ENOENT");
    });
    expect(limit.usage()).toBeUndefined();
    expect(() => limit.spawn(forkptyFailed)).toThrow("forkpty(3) failed.");
  });

  it("lets a connection in while it leaves the reserve free, reading /proc again only when the count is old or close", () => {
    let open = 64 - CONNECTION_DESCRIPTOR_RESERVE;
    let reads = 0;
    const { limit } = setup(() => (reads++, open));
    expect(limit.roomForConnection()).toBe(true);
    open++;
    expect(limit.roomForConnection()).toEqual({ open, limit: 64 });
    expect(reads).toBe(2);
    const roomy = setup(() => (reads++, 20), () => LIMITS.replace("64  ", "4096"));
    reads = 0;
    for (let i = 0; i < 10; i++) expect(roomy.limit.roomForConnection()).toBe(true);
    expect(reads).toBe(1);
  });

  it("warns once every 10 s however many spawns it refuses", () => {
    const { limit, lines } = setup(() => 63);
    for (let i = 0; i < 5; i++) expect(() => limit.spawn(() => "never")).toThrow(expect.objectContaining({ kind: "resource_exhausted" }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toHaveProperty("leftOut");
  });
});
