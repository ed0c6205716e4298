import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SignalTarget, SpawnRequestSchema, TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { checkedSize, signalTargetFrom, spawnOptionsFromRequest } from "../../../services/runner/spawn-request.js";

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
