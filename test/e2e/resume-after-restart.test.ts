import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../lib/listen.js";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { ROOT, startServiceProcess, type ServiceProcess } from "./service-process.js";

const RUNNER_TOKEN = "resume-runner-token";
const GATEWAY_TOKEN = "resume-gateway-token";
const BIN = join(ROOT, "bin/ahp-term.js");
const LINES = 200_000;
/** `seq 1 200000` in bursts of 2,000 lines 20 ms apart: a flood that lasts long enough to kill the gateway in the middle of it. */
const FLOOD = `sleep 1; for b in $(seq 0 99); do seq $((b*2000+1)) $((b*2000+2000)); sleep 0.02; done; sleep 600`;
/** What ahp-term writes before a restored screen: its reset ends with a soft reset (DECSTR). */
const RESET_MARK = "\x1b[!p";

let runner: RunnerProcess;
let gateway: ServiceProcess;
let port: number;
const url = (): string => `ws://127.0.0.1:${port}/?tkn=${GATEWAY_TOKEN}`;
/** The compiled gateway, on the same port every time, as a supervisor restarts it. */
const startGateway = (): Promise<ServiceProcess> => startServiceProcess("gateway/main.ts", ["--port", String(port), "--runner", runner.url, "--token", GATEWAY_TOKEN], { RUNNER_TOKEN }, { compiled: true });

describe("ahp-term attach through a gateway killed in the middle of a flood (compiled processes)", () => {
  let attached: ChildProcess | undefined;
  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), "resume-home-"));
    // The runner holds the whole flood, so everything a client missed can be read again.
    runner = await startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN, "--retain-bytes", String(8 * 1024 * 1024)], { SHELL: "/bin/sh", HOME: home, ENV: "", PS1: "$ " }, { compiled: true });
    port = await freePort();
    gateway = await startGateway();
  }, 60_000);
  afterAll(async () => {
    attached?.kill("SIGKILL");
    await gateway?.stop("SIGKILL");
    await runner?.stop();
  });

  it("resumes from the byte it had: every line of seq 1 200000 exactly once, in order, with no screen drawn again", async () => {
    const creator = await AhpTestClient.initialized(url());
    const uri = `ahp-terminal:/flood-${crypto.randomUUID()}`;
    await creator.call("createTerminal", { channel: uri, _meta: { "ahp.argv": ["sh", "-c", FLOOD] } });
    creator.close();
    // Output to a pipe, not a terminal: what ahp-term writes is exactly what reaches the screen.
    const child = spawn(process.execPath, [BIN, "attach", uri], { cwd: ROOT, env: { ...process.env, AHP_URL: url() }, stdio: ["pipe", "pipe", "pipe"] });
    attached = child;
    let shown = "";
    let said = "";
    child.stdout!.setEncoding("utf8").on("data", (text: string) => (shown += text));
    child.stderr!.setEncoding("utf8").on("data", (text: string) => (said += text));
    const linesShown = (): number => shown.split("\r\n").length - 1;

    expect(await eventually(() => linesShown() >= 40_000, 30_000)).toBe(true);
    await gateway.stop("SIGKILL");
    const atKill = linesShown();
    expect(atKill).toBeLessThan(LINES);
    expect(await eventually(() => said.includes("reconnecting"), 10_000)).toBe(true);
    gateway = await startGateway();
    expect(await eventually(() => shown.includes(`\r\n${LINES}\r\n`), 60_000)).toBe(true);

    expect(said).toContain("reconnected");
    expect(said).not.toContain("cannot be shown");
    // One reset: the first attach's. Coming back appended what was missed instead of drawing the screen again.
    expect(shown.split(RESET_MARK)).toHaveLength(2);
    const expected = Array.from({ length: LINES }, (_, i) => `${i + 1}\r\n`).join("");
    const start = shown.indexOf("1\r\n2\r\n3\r\n");
    const flood = shown.slice(start, start + expected.length);
    if (flood !== expected) {
      const got = flood.split("\r\n");
      const first = got.findIndex((line, index) => line !== String(index + 1));
      throw new Error(`line ${first + 1} reads ${JSON.stringify(got.slice(first, first + 3))} (the gateway was killed after ${atKill} lines)`);
    }
    // Nothing after the flood but the prompt-less quiet of `sleep`.
    expect(shown.slice(start + expected.length)).not.toMatch(/\d/);
  }, 120_000);
});
