import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { ROOT } from "./service-process.js";
import { useTwoProcesses } from "./two-processes.js";

const system = useTwoProcesses();

const BIN = join(ROOT, "bin/ahp-term.js");

function ahpTerm(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, AHP_URL: system.url, ...env } });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr }));
  });
}

describe("ahp-term run", () => {
  it("streams the command's output and exits with its exit code", async () => {
    const result = await ahpTerm(["run", "--", "sh", "-c", "echo out; echo err >&2; exit 3"]);
    expect(result.stdout).toBe("out\r\nerr\r\n");
    expect(result.code).toBe(3);
  });

  it("exits with 128 plus the signal's number when a signal kills the command", async () => {
    expect((await ahpTerm(["run", "--", "sh", "-c", "kill -TERM $$"])).code).toBe(143);
  });

  it("runs the command word by word, in the directory asked for", async () => {
    const result = await ahpTerm(["run", "--cwd", "/tmp", "--", "sh", "-c", 'printf "%s|" "$PWD" "$1"', "sh", "a b;c"]);
    expect(result.stdout).toBe("/tmp|a b;c|");
  });

  it("gives the command this terminal's TERM, as ssh does, where the runner's host describes it", async () => {
    expect((await ahpTerm(["run", "--", "sh", "-c", 'echo "$TERM"'], { TERM: "screen-256color" })).stdout).toBe("screen-256color\r\n");
  });

  it("delivers 10 MB of output whole, and UTF-8 intact", async () => {
    const big = await ahpTerm(["run", "--", "sh", "-c", "head -c 10000000 /dev/zero | tr '\\0' a"]);
    expect(big.code).toBe(0);
    expect(big.stdout.length).toBe(10_000_000);
    expect(/^a+$/.test(big.stdout)).toBe(true);
    const utf8 = await ahpTerm(["run", "--", "printf", "café ✓ 日本語 🙂\\n"]);
    expect(utf8.stdout).toBe("café ✓ 日本語 🙂\r\n");
  }, 60_000);

  it("forwards ^C to the command", async () => {
    const child = spawn(process.execPath, [BIN, "run", "--", "sh", "-c", "trap 'echo caught; exit 9' INT; echo ready; while :; do sleep 0.05; done"], {
      cwd: ROOT,
      env: { ...process.env, AHP_URL: system.url },
    });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    expect(await eventually(() => stdout.includes("ready"))).toBe(true);
    child.kill("SIGINT");
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(stdout).toContain("caught");
    expect(code).toBe(9);
  });
});

describe("ahp-term run from a terminal", () => {
  it("passes keys on raw, so ^C is echoed once (by the command's terminal) and ends the command", async () => {
    const pty = createRequire(import.meta.url)("node-pty") as typeof import("node-pty");
    const outer = pty.spawn("/bin/sh", ["-c", `${process.execPath} ${BIN} run -- sh -c 'echo ready; read line; echo got:$line; sleep 30'; echo "EXIT=$?"; stty -a`], {
      cols: 80,
      rows: 24,
      cwd: ROOT,
      env: { ...process.env, AHP_URL: system.url } as Record<string, string>,
    });
    let screen = "";
    outer.onData((data) => (screen += data));
    expect(await eventually(() => screen.includes("ready"), 10_000)).toBe(true);
    outer.write("typed\r");
    expect(await eventually(() => screen.includes("got:typed"))).toBe(true);
    outer.write("\u0003");
    expect(await eventually(() => screen.includes("EXIT="), 10_000)).toBe(true);
    expect(screen).toContain("EXIT=130");
    expect(screen.slice(0, screen.indexOf("EXIT=")).match(/\^C/g)).toHaveLength(1);
    // The local terminal is cooked again afterwards.
    expect(await eventually(() => /\sicanon\s/.test(screen.slice(screen.indexOf("EXIT="))))).toBe(true);
    outer.kill();
  }, 30_000);
});

describe("ahp-term ls, new and rm", () => {
  it("round-trip a terminal", async () => {
    const created = await ahpTerm(["new", "--name", "cli made", "--cwd", "/tmp"]);
    expect(created.code).toBe(0);
    const uri = created.stdout.trim();
    expect(uri).toMatch(/^ahp-terminal:\/[0-9a-f-]{36}$/);
    const listed = await ahpTerm(["ls"]);
    expect(listed.stdout).toMatch(new RegExp(`^${uri}\\tcli made\\tclient:ahp-term-\\d+-\\d+\\trunning$`, "m"));
    expect((await ahpTerm(["rm", uri])).code).toBe(0);
    expect((await ahpTerm(["ls"])).stdout).not.toContain(uri);
  });

  it("print a title a program set with its controls spelled out, so it cannot forge a row", async () => {
    const client = await AhpTestClient.initialized(system.url, { subscribe: ["ahp-root://"] });
    const uri = `ahp-terminal:/forger-${crypto.randomUUID()}`;
    await client.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", "printf '\\033]0;innocent\\nahp-terminal:/admin\\tforged\\342\\200\\256\\007'; sleep 30"] } });
    await client.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes("innocent"));
    const listed = await ahpTerm(["ls"]);
    const rows = listed.stdout.split("\n").filter((line) => line.includes("forger-"));
    expect(rows).toEqual([expect.stringMatching(new RegExp(`^${uri}\tinnocent\ufffd+ahp-terminal:/admin\ufffdforged\ufffd\tclient:`))]);
    expect(listed.stdout.split("\n").some((line) => line.startsWith("ahp-terminal:/admin"))).toBe(false);
    await client.call("disposeTerminal", { channel: uri });
    client.close();
  });

  it("say clearly what went wrong: a refused token, a gateway that is down, an unknown terminal, bad usage", async () => {
    const refused = await ahpTerm(["ls"], { AHP_URL: system.url.replace(/tkn=[^&]+/, "tkn=wrong") });
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining("refused the connection token") });
    const tokenless = await ahpTerm(["ls"], { AHP_URL: system.url.replace(/^ws:/, "http:").replace(/\?.*$/, "") });
    expect(tokenless).toMatchObject({ code: 1, stderr: expect.stringContaining("no connection token") });
    expect((await ahpTerm(["ls"], { AHP_URL: "ftp://127.0.0.1:9/?tkn=x" })).stderr).toContain("the gateway's URL starts with ws://");
    const down = await ahpTerm(["ls"], { AHP_URL: "ws://127.0.0.1:9/?tkn=x" });
    expect(down).toMatchObject({ code: 1, stderr: expect.stringContaining("cannot reach the gateway at ws://127.0.0.1:9/") });
    const unknown = await ahpTerm(["rm", "ahp-terminal:/nope"]);
    expect(unknown).toMatchObject({ code: 1, stderr: "ahp-term: no terminal at ahp-terminal:/nope\n" });
    expect((await ahpTerm(["run"])).code).toBe(2);
    expect((await ahpTerm(["frobnicate"])).stderr).toContain("unknown command");
  });
});

describe("ahp-term attach", () => {
  it("drives a terminal from a real pty in raw mode, follows resizes, detaches with Ctrl-] d and restores the terminal", async () => {
    const uri = (await ahpTerm(["new"])).stdout.trim();
    const pty = createRequire(import.meta.url)("node-pty") as typeof import("node-pty");
    const outer = pty.spawn("/bin/sh", ["-c", `${process.execPath} ${BIN} attach ${uri}; echo "EXIT=$?"; stty -a`], {
      cols: 80,
      rows: 24,
      cwd: ROOT,
      env: { ...process.env, AHP_URL: system.url } as Record<string, string>,
    });
    let screen = "";
    outer.onData((data) => (screen += data));
    expect(await eventually(() => screen.includes("detach with Ctrl-] d"), 10_000)).toBe(true);
    // The banner stands on a line of its own, before the redrawn screen (the shell's prompt).
    expect(screen).toMatch(/^\[attached to [^\]\r\n]+; detach with Ctrl-\] d\]\r+\n/);
    outer.write("echo inner-$((2+3))\r");
    expect(await eventually(() => screen.includes("inner-5"))).toBe(true);
    outer.resize(100, 30);
    // ahp-term passed the new size on: the gateway's terminal has it (input sent after it waits for the runner's resize).
    const observer = await AhpTestClient.initialized(system.url);
    const resized = async (): Promise<boolean> => {
      const { state } = (await observer.call("subscribe", { channel: uri })).snapshot;
      return state.cols === 100 && state.rows === 30;
    };
    expect(await eventually(resized)).toBe(true);
    observer.close();
    outer.write("stty size\r");
    expect(await eventually(() => screen.includes("30 100"))).toBe(true);
    // Keys typed before the detach in the same read still reach the shell.
    const marker = join(tmpdir(), `ahp-term-before-detach-${process.pid}`);
    outer.write(`touch ${marker}\r\u001dd`);
    expect(await eventually(() => screen.includes("EXIT=0"))).toBe(true);
    expect(screen).toContain(`[detached from ${uri}]`);
    expect(await eventually(() => existsSync(marker))).toBe(true);
    rmSync(marker, { force: true });
    expect(await eventually(() => /\sicanon\s/.test(screen.slice(screen.indexOf("EXIT=0"))))).toBe(true);
    const after = screen.slice(screen.indexOf("EXIT=0"));
    expect(after).not.toMatch(/-icanon/);
    expect(after).toMatch(/\secho\s/);
    outer.kill();
    // Detaching leaves the terminal running.
    expect((await ahpTerm(["ls"])).stdout).toMatch(new RegExp(`^${uri}\\t.*\\trunning$`, "m"));
  }, 30_000);
});
