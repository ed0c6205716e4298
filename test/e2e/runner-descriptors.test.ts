import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TerminalMode } from "../../gen/terminal/v1/terminal_pb.js";
import { DESCRIPTOR_PROBE, parseDescriptorListing, strayDescriptors } from "../support/descriptor-listing.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { runServiceToExit } from "./service-process.js";

const TOKEN = "descriptor-test-token";
/** O_CLOEXEC in the `flags:` line of /proc/<pid>/fdinfo/<fd> (octal). */
const O_CLOEXEC = 0o2000000;
/** A descriptor the runner is started with and without close-on-exec, as a shell or supervisor may leave one. */
const INHERITED_FD = 40;

let runner: RunnerProcess | undefined;
let home: string | undefined;
const streams = new AbortController();
afterEach(async () => {
  streams.abort();
  await runner?.stop("SIGKILL");
  if (home) rmSync(home, { recursive: true, force: true });
});

/** The descriptors above 2 of process `pid` that are not close-on-exec, each with its target. */
function inheritable(pid: number): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${entry}`, "utf8"))![1]!;
      if (Number(entry) > 2 && (parseInt(flags, 8) & O_CLOEXEC) === 0) found.push(`${entry} -> ${readlinkSync(`/proc/${pid}/fd/${entry}`)}`);
    } catch {
      // Closed while we looked.
    }
  }
  return found;
}

describe("the runner process, started as npm start starts it", () => {
  it("passes no descriptor of its own, nor one it inherited, to any terminal, under a load of ptys, pipes and Attach streams", async () => {
    home = mkdtempSync(join(tmpdir(), "descriptor-home-"));
    runner = await startRunnerProcess(["--port", "0", "--token", TOKEN], { HOME: home, SHELL: "/bin/sh", ENV: "", RUNNER_TOKEN: undefined }, { compiled: true, inheritedFd: INHERITED_FD });
    const client = runner.client(TOKEN);
    for (let i = 0; i < 10; i++) {
      const { terminal } = await client.spawn({ argv: ["/bin/sh"], mode: i % 2 ? TerminalMode.PIPES : TerminalMode.PTY });
      void (async () => {
        for await (const _ of client.attach({ id: terminal!.id, follow: true }, { signal: streams.signal }));
      })().catch(() => {});
      await client.write({ id: terminal!.id, data: Buffer.from("echo ready\n") });
    }
    for (const mode of [TerminalMode.PTY, TerminalMode.PIPES]) {
      const { terminal } = await client.spawn({ argv: ["/bin/sh", "-c", DESCRIPTOR_PROBE], mode });
      let output = "";
      for await (const event of client.attach({ id: terminal!.id, follow: true })) {
        if (event.event.case === "output") output += Buffer.from(event.event.value.data).toString();
      }
      const listing = parseDescriptorListing(output);
      expect([...listing.shell.keys()].sort()).toEqual([0, 1, 2]);
      expect(strayDescriptors(listing), `mode ${mode}`).toEqual([]);
    }
    expect(inheritable(runner.child.pid!)).toEqual([]);
    const closed = runner.stderrLines.find((line) => line.includes("closed descriptors the runner inherited without close-on-exec"));
    expect(closed).toContain(`"fd":${INHERITED_FD},`);
  });
});

describe("the runner process under a V8 option that keeps a file open", () => {
  it("refuses to start, in one line naming the option and the way to profile instead", async () => {
    const before = new Set(readdirSync("/tmp").filter((name) => /^perf-\d+\.map$/.test(name)));
    try {
      const refused = await runServiceToExit("services/runner/main.ts", ["--port", "0", "--insecure"], { NODE_OPTIONS: "--perf-basic-prof" });
      expect(refused).toMatchObject({ code: 2, stdout: "", stderr: expect.stringMatching(/^runner: --perf-basic-prof: V8 would keep a file open [^\n]*--cpu-prof \(--help lists the flags\)\n$/) });
    } finally {
      // V8 wrote its map before the runner could refuse.
      for (const name of readdirSync("/tmp")) if (/^perf-\d+\.map$/.test(name) && !before.has(name)) rmSync(join("/tmp", name), { force: true });
    }
  });
});
