import { describe, expect, it } from "vitest";
import { checkNiceProgram, lowerNewSessionGroup, NICE_PROGRAM, parseAutogroup, setSessionGroupNice, withNiceness, type AutogroupFiles } from "../../../services/runner/process/niceness.js";

/** Autogroup files in memory: the runner's own group, and the child's, which may change as it would at setsid. */
function autogroups(own: string, child: () => string | undefined): AutogroupFiles & { writes: Array<[number, string]> } {
  const writes: Array<[number, string]> = [];
  return {
    writes,
    read: (pid) => {
      if (pid === "self") return own;
      const text = child();
      if (text === undefined) throw Object.assign(new Error("gone"), { code: "ENOENT" });
      return text;
    },
    write: (pid, text) => void writes.push([pid, text]),
  };
}

describe("a terminal process's CPU priority", () => {
  it("reads an autogroup file, and nothing else", () => {
    expect(parseAutogroup("/autogroup-160828 nice 10\n")).toEqual({ group: "/autogroup-160828", nice: 10 });
    expect(parseAutogroup("/autogroup-7 nice -5\n")).toEqual({ group: "/autogroup-7", nice: -5 });
    expect(parseAutogroup("garbage")).toBeUndefined();
  });

  it("starts the program through nice, which lowers it before it runs; as it is for 0", () => {
    const spec = { file: "/bin/sh", args: ["-c", "make -j4"], cwd: "/", env: {}, cols: 80, rows: 24 };
    expect(withNiceness(spec, 10)).toEqual({ ...spec, file: NICE_PROGRAM, args: ["-n", "10", "--", "/bin/sh", "-c", "make -j4"] });
    expect(withNiceness(spec, 0)).toBe(spec);
    expect(() => checkNiceProgram(10)).not.toThrow();
    expect(() => checkNiceProgram(0)).not.toThrow();
  });

  it("sets a session group's niceness relative to the runner's group, only when the process has a group of its own", () => {
    expect(setSessionGroupNice(4242, 10, autogroups("/autogroup-1 nice 0\n", () => "/autogroup-2 nice 10\n"))).toBe("written");
    const back = autogroups("/autogroup-1 nice 0\n", () => "/autogroup-2 nice 10\n");
    expect(setSessionGroupNice(4242, 0, back)).toBe("written");
    expect(back.writes).toEqual([[4242, "0"]]);
    const shared = autogroups("/autogroup-1 nice 0\n", () => "/autogroup-1 nice 0\n");
    expect(setSessionGroupNice(4242, 10, shared)).toBe("shares-runner-group");
    expect(shared.writes).toEqual([]);
    expect(setSessionGroupNice(4242, 10, autogroups("/autogroup-1 nice 0\n", () => undefined))).toBe("unavailable");
  });

  it("lowers the session's group once the process leads a session of its own, relative to the runner's group", async () => {
    const files = autogroups("/autogroup-1 nice 2\n", () => "/autogroup-9 nice 0\n");
    await lowerNewSessionGroup(4242, 10, files);
    expect(files.writes).toEqual([[4242, "12"]]);
  });

  it("waits while the process still shares the runner's group (before its setsid), and never changes that group", async () => {
    let looks = 0;
    const moving = autogroups("/autogroup-1 nice 0\n", () => (++looks < 4 ? "/autogroup-1 nice 0\n" : "/autogroup-2 nice 0\n"));
    await lowerNewSessionGroup(4242, 10, moving);
    expect(looks).toBe(4);
    expect(moving.writes).toEqual([[4242, "10"]]);
    const staying = autogroups("/autogroup-1 nice 0\n", () => "/autogroup-1 nice 0\n");
    await lowerNewSessionGroup(4242, 10, staying);
    expect(staying.writes).toEqual([]);
  });

  it("stops at the kernel's lowest priority, does nothing for 0, and lets a kernel without autogroup or a process gone be", async () => {
    const clamped = autogroups("/autogroup-1 nice 15\n", () => "/autogroup-3 nice 0\n");
    await lowerNewSessionGroup(4242, 10, clamped);
    expect(clamped.writes).toEqual([[4242, "19"]]);
    const untouched = autogroups("/autogroup-1 nice 0\n", () => "/autogroup-4 nice 0\n");
    await lowerNewSessionGroup(4242, 0, untouched);
    expect(untouched.writes).toEqual([]);
    const noAutogroup: AutogroupFiles = {
      read: () => {
        throw Object.assign(new Error("no such file"), { code: "ENOENT" });
      },
      write: () => expect.unreachable("nothing to write"),
    };
    await lowerNewSessionGroup(4242, 10, noAutogroup);
    const gone = autogroups("/autogroup-1 nice 0\n", () => undefined);
    await lowerNewSessionGroup(4242, 10, gone);
    expect(gone.writes).toEqual([]);
  });
});
