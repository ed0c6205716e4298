import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../../..");

/** Run in a process of its own with few descriptors: fills them, then starts a pipe terminal. */
const SCRIPT = `
import { closeSync, openSync } from "node:fs";
import { spawnPipes } from "./services/runner/process/pipes.ts";
const held = [];
try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
// Two free: too few for three pipes.
closeSync(held.pop());
closeSync(held.pop());
let outcome;
try {
  spawnPipes({ file: "/bin/true", args: [], cwd: "/", env: {}, cols: 80, rows: 24 }, { onData() {}, onExit() {} }, { watch() {}, forget() {} });
  outcome = "started";
} catch (err) {
  outcome = err.code + ": " + err.message;
}
// Said a moment later, so an error the refused spawn left behind would have ended the process first (a non-event: only a pause shows it).
setTimeout(() => console.log(JSON.stringify({ outcome })), 200);
`;

describe("a pipe terminal the runner has no descriptors for", () => {
  it("is refused with EMFILE, and the runner lives on", () => {
    const run = spawnSync("prlimit", ["--nofile=64:64", process.execPath, "--import", "tsx", "--input-type=module", "-e", SCRIPT], { cwd: ROOT, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ outcome: "EMFILE: cannot make pipes for the process: the runner is out of file descriptors" });
  });
});
