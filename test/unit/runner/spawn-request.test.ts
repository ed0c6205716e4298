import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SignalTarget, SpawnRequestSchema, TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { checkedSize, signalTargetFrom, spawnOptionsFromRequest } from "../../../services/runner/rpc/spawn-request.js";

describe("spawnOptionsFromRequest", () => {
  it("defaults to 80x24 in auto mode", () => {
    expect(spawnOptionsFromRequest(create(SpawnRequestSchema, {}))).toMatchObject({ cols: 80, rows: 24, mode: "auto" });
  });

  it("maps modes", () => {
    expect(spawnOptionsFromRequest(create(SpawnRequestSchema, { mode: TerminalMode.PIPES })).mode).toBe("pipes");
    expect(spawnOptionsFromRequest(create(SpawnRequestSchema, { mode: TerminalMode.PTY })).mode).toBe("pty");
  });

  it("refuses argv together with command, an empty program, an explicit zero size and control characters in ids", () => {
    const refusals = [
      { argv: ["ls"], command: "ls" },
      { argv: [""] },
      { cols: 0 },
      { rows: 5000 },
      { id: "a\nb" },
      { mode: 42 as TerminalMode },
    ];
    for (const fields of refusals) {
      expect(() => spawnOptionsFromRequest(create(SpawnRequestSchema, fields))).toThrow(
        expect.objectContaining({ kind: "invalid_argument" }),
      );
    }
  });
});

describe("spawnOptionsFromRequest's refusal of what would not reach the process as sent", () => {
  it("refuses NUL anywhere it would cut a C string, and env names with = or nothing", () => {
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ env: { "A=B": "x" } }, /names must be non-empty without "=" or NUL/],
      [{ env: { "": "x" } }, /names must be non-empty/],
      [{ env: { "A\0B": "x" } }, /names must be non-empty/],
      [{ env: { A: "x\0y" } }, /env A must not contain NUL/],
      [{ argv: ["ls", "a\0b"] }, /argv\[1\] must not contain NUL/],
      [{ command: "ls\0rm" }, /command must not contain NUL/],
      [{ cwd: "/tmp\0x" }, /cwd must not contain NUL/],
      [{ shell: "/bin/sh\0" }, /shell must not contain NUL/],
    ];
    for (const [fields, message] of refusals) expect(() => spawnOptionsFromRequest(create(SpawnRequestSchema, fields))).toThrow(message);
  });

  it("refuses C0, C1, bidirectional controls and invisible characters in ids, controls in labels, and oversized labels and titles", () => {
    for (const id of ["a\u0085b", "a\u202eb", "a\u2066b", "a\u200fb", "a\u007fb", "a\u009bb", "a\u200bb", "a\u200db", "\ufeffab"]) {
      expect(() => spawnOptionsFromRequest(create(SpawnRequestSchema, { id }))).toThrow(/control, bidirectional or invisible characters \(it holds U\+/);
    }
    expect(() => spawnOptionsFromRequest(create(SpawnRequestSchema, { labels: { owner: "m\u202eallory" } }))).toThrow(/contains U\+202E/);
    expect(() => spawnOptionsFromRequest(create(SpawnRequestSchema, { labels: { "k\u0085": "v" } }))).toThrow(/contains U\+0085/);
    expect(() => spawnOptionsFromRequest(create(SpawnRequestSchema, { labels: { k: "v".repeat(16 * 1024 + 1) } }))).toThrow(/at most 16384/);
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"]));
    expect(() => spawnOptionsFromRequest(create(SpawnRequestSchema, { labels: many }))).toThrow(/at most 64 labels/);
    expect(() => spawnOptionsFromRequest(create(SpawnRequestSchema, { title: "t".repeat(4097) }))).toThrow(/title must be at most 4096/);
    expect(spawnOptionsFromRequest(create(SpawnRequestSchema, { id: "ok-é-日本", labels: { "ahp.uri": "ahp-terminal:/x" }, title: "café" })).id).toBe("ok-é-日本");
  });
});

describe("checkedSize", () => {
  it("accepts 1..2000 and nothing else", () => {
    expect(checkedSize(1, 2000)).toEqual({ cols: 1, rows: 2000 });
    expect(() => checkedSize(0, 10)).toThrow(/cols must be between 1 and 2000, got 0/);
    expect(() => checkedSize(10, 2001)).toThrow(/rows/);
  });
});

describe("signalTargetFrom", () => {
  it("defaults to the group", () => {
    expect(signalTargetFrom(SignalTarget.UNSPECIFIED)).toBe("group");
    expect(signalTargetFrom(SignalTarget.PROCESS)).toBe("process");
    expect(() => signalTargetFrom(9 as SignalTarget)).toThrow(/unknown signal target/);
  });
});
