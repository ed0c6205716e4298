import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { eventually, succeeds } from "../support/eventually.js";
import { ROOT } from "./service-process.js";

describe("npm start", () => {
  it("runs runner and gateway as two processes, prints three lines (the gateway URL with its token first), and stops both on SIGTERM", async () => {
    const child = spawn("npm", ["start", "--silent", "--", "--port", "0", "--runner-port", "0"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    const stderr: string[] = [];
    const stdout: string[] = [];
    createInterface({ input: child.stderr }).on("line", (line) => stderr.push(line));
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).on("line", (line) => stdout.push(line) === 1 && resolve(line));
      child.once("exit", (code) => reject(new Error(`npm start exited with ${code}: ${stderr.join("\n")}`)));
    });
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/\?tkn=[\w-]+$/);
    const client = await AhpTestClient.initialized(url, { subscribe: ["ahp-root://"] });
    await client.call("createTerminal", { channel: "ahp-terminal:/npm-start" });
    await client.call("subscribe", { channel: "ahp-terminal:/npm-start" });
    client.dispatch("ahp-terminal:/npm-start", { type: "terminal/input", data: "echo from-start-$((5+5))\r" });
    await client.waitForOutput("ahp-terminal:/npm-start", /from-start-10/);
    // The three lines README.md and docs/operations.md show, and nothing else on stdout.
    expect(stdout).toEqual([url, `console: ${url.replace(/^ws/, "http")}`, expect.stringMatching(/^runner: http:\/\/127\.0\.0\.1:\d+ \(its bearer token is in \S+, readable by this account only\)$/)]);
    const names = new Set(stderr.map((line) => (JSON.parse(line) as { name?: string }).name));
    expect(names).toEqual(new Set(["runner", "gateway"]));
    const exited = new Promise<string>((resolve) => child.once("exit", (code, signal) => resolve(signal ?? String(code))));
    child.kill("SIGTERM");
    // npm itself reports the forwarded signal; what matters is that both services shut down cleanly.
    expect(["0", "SIGTERM"]).toContain(await exited);
    expect(await client.closed()).toBe(1001);
    const stopped = (): string[] => stderr.filter((line) => line.includes('"msg":"stopped"'));
    expect(await eventually(() => stopped().length >= 2)).toBe(true);
    expect(stopped()).toHaveLength(2);
  });
});

/** Pids of every descendant of `pid` whose command line contains `text`. */
function descendants(pid: number, text: string): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const isDescendant = (candidate: number): boolean => {
    for (let parent = parents.get(candidate); parent !== undefined && parent > 1; parent = parents.get(parent)) if (parent === pid) return true;
    return false;
  };
  return [...parents.keys()].filter((candidate) => {
    if (!isDescendant(candidate)) return false;
    try {
      return readFileSync(`/proc/${candidate}/cmdline`, "utf8").includes(text);
    } catch {
      return false;
    }
  });
}

/** Starts `npm start` with these arguments and environment; resolves with its first three stdout lines once they are out. */
async function npmStart(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn("npm", ["start", "--silent", "--", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on("line", (line) => stderr.push(line));
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(line);
      if (lines.length === 3) resolve();
    });
    child.once("exit", (code) => reject(new Error(`npm start exited with ${code}: ${stderr.join("\n")}`)));
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  };
  return { child, lines, stderr, stop };
}

describe("npm start's settings", () => {
  it("passes flags on to the child that has them, and says how to reach the runner and where its token is", async () => {
    const started = await npmStart(["--port", "0", "--runner-port", "0", "--allow-run-as", "--runner.metrics-port", "0", "--gateway.scrollback-chars", "5000"], { RUNNER_TOKEN: "a-known-runner-token" });
    try {
      const [, , runnerLine] = started.lines;
      const [, runnerUrl, tokenFile] = /^runner: (http:\/\/127\.0\.0\.1:\d+) \(its bearer token is in (\S+), readable by this account only\)$/.exec(runnerLine!)!;
      expect(readFileSync(tokenFile!, "utf8")).toBe("a-known-runner-token\n");
      expect(statSync(tokenFile!).mode & 0o077).toBe(0);
      // The runner answers plain HTTP/1.1 JSON with that token.
      const listed = await fetch(`${runnerUrl}/terminal.v1.TerminalService/List`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer a-known-runner-token" }, body: "{}" });
      expect(listed.status).toBe(200);
      const runnerLog = started.stderr.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.msg === "runner listening")!;
      expect(runnerLog).toMatchObject({ runAs: true, metrics: expect.stringMatching(/^http:/) });
      // Neither child carries a token in its environment or on its command line.
      for (const pid of [...descendants(started.child.pid!, "dist/app/services/runner/main.js"), ...descendants(started.child.pid!, "dist/app/gateway/main.js")]) {
        const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        expect(environ).not.toMatch(/RUNNER_TOKEN|GATEWAY_TOKEN|a-known-runner-token/);
        expect(cmdline).not.toContain("a-known-runner-token");
      }
    } finally {
      await started.stop();
    }
  }, 30_000);

  it("starts both children with malloc's huge pages added to the tunables given, and keeps them out of terminals", async () => {
    const started = await npmStart(["--port", "0", "--runner-port", "0"], { GLIBC_TUNABLES: "glibc.malloc.arena_max=4" });
    try {
      for (const entry of ["dist/app/services/runner/main.js", "dist/app/gateway/main.js"]) {
        const [pid] = descendants(started.child.pid!, entry);
        // glibc cuts the process's own copy of the variable at each tunable as it reads them (a NUL for each colon).
        expect(readFileSync(`/proc/${pid}/environ`, "utf8")).toMatch(/\0GLIBC_TUNABLES=glibc\.malloc\.arena_max=4[:\0]glibc\.malloc\.hugetlb=1\0/);
      }
      const client = await AhpTestClient.initialized(started.lines[0]!, { subscribe: ["ahp-root://"] });
      await client.call("createTerminal", { channel: "ahp-terminal:/tunables" });
      await client.call("subscribe", { channel: "ahp-terminal:/tunables" });
      client.dispatch("ahp-terminal:/tunables", { type: "terminal/input", data: 'echo "tunables=[$GLIBC_TUNABLES]"\r' });
      await client.waitForOutput("ahp-terminal:/tunables", /tunables=\[glibc\.malloc\.arena_max=4\]/);
      client.close();
    } finally {
      await started.stop();
    }
  }, 30_000);

  it("refuses flags it cannot route, with the way out", async () => {
    const run = (args: string[]): Promise<{ code: number | null; stderr: string }> =>
      new Promise((resolve) => {
        const child = spawn("npm", ["start", "--silent", "--", ...args], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        child.stderr.on("data", (chunk) => (stderr += chunk));
        child.once("exit", (code) => resolve({ code, stderr }));
      });
    expect(await run(["--metrics-port", "9464"])).toMatchObject({ code: 2, stderr: expect.stringContaining("say --runner.metrics-port or --gateway.metrics-port") });
    expect(await run(["--gateway.runner", "http://elsewhere"])).toMatchObject({ code: 2, stderr: expect.stringContaining("sets the gateway's --runner itself") });
    expect(await run(["--frobnicate"])).toMatchObject({ code: 2, stderr: expect.stringContaining("neither the runner nor the gateway has a --frobnicate flag") });
  }, 30_000);
});

describe("npm start keeps both processes up", () => {
  it("restarts a child killed with -9, at the same address, and logs the restart", async () => {
    const child = spawn("npm", ["start", "--silent", "--", "--port", "0", "--runner-port", "0"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    const stderr: string[] = [];
    createInterface({ input: child.stderr }).on("line", (line) => stderr.push(line));
    const url = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve));
    try {
      const [runnerPid] = descendants(child.pid!, "dist/app/services/runner/main.js");
      process.kill(runnerPid!, "SIGKILL");
      expect(await eventually(() => stderr.some((line) => line.includes('"child":"runner"') && line.includes("child restarted")), 10_000)).toBe(true);
      // The gateway reaches the restarted runner at the same address: new terminals work.
      const client = await AhpTestClient.initialized(url);
      expect(
        await eventually(() => succeeds(() => client.call("createTerminal", { channel: `ahp-terminal:/after-runner-${Date.now()}` })), 15_000),
      ).toBe(true);
      client.close();

      const [gatewayPid] = descendants(child.pid!, "dist/app/gateway/main.js");
      process.kill(gatewayPid!, "SIGKILL");
      expect(await eventually(() => stderr.some((line) => line.includes('"child":"gateway"') && line.includes("child restarted")), 10_000)).toBe(true);
      const again = await eventually(async () => {
        try {
          (await AhpTestClient.initialized(url)).close();
          return true;
        } catch {
          return false;
        }
      }, 15_000);
      expect(again).toBe(true);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  }, 60_000);
});
