import { describe, expect, it } from "vitest";
import { groupIsAlive, parseSignalName, signalGroup, signalNameOf, signalProcess } from "../../../services/runner/process/signals.js";

describe("signal names", () => {
  it("accepts names with or without SIG, in any case", () => {
    expect(parseSignalName("SIGINT")).toBe("SIGINT");
    expect(parseSignalName("term")).toBe("SIGTERM");
    expect(parseSignalName(" usr1 ")).toBe("SIGUSR1");
  });

  it("refuses unknown and empty names as invalid arguments", () => {
    for (const bad of ["SIGNOPE", "", "9", "KILLALL"]) {
      expect(() => parseSignalName(bad)).toThrow(expect.objectContaining({ kind: "invalid_argument" }));
    }
  });

  it("names signal numbers", () => {
    expect(signalNameOf(9)).toBe("SIGKILL");
    expect(signalNameOf(2)).toBe("SIGINT");
    expect(signalNameOf(200)).toBe("SIG200");
  });
});

describe("signalling", () => {
  it("never signals group 0, group 1 or pid 1", () => {
    expect(signalGroup(0, "SIGTERM")).toBe(false);
    expect(signalGroup(1, "SIGTERM")).toBe(false);
    expect(signalProcess(1, "SIGTERM")).toBe(false);
    expect(groupIsAlive(0)).toBe(false);
  });

  it("reports a group that does not exist", () => {
    expect(groupIsAlive(2 ** 22 - 3)).toBe(false);
  });
});
