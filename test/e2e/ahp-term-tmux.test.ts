import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { emulate, PARTIAL_REDRAW, retainedInputs, screenCells } from "../support/emulated-screen.js";
import { eventually } from "../support/eventually.js";
import { TmuxPane } from "../support/tmux-pane.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { ROOT, startServiceProcess, type ServiceProcess } from "./service-process.js";

const hasTmux = ((): boolean => {
  try {
    execFileSync("tmux", ["-V"]);
    return true;
  } catch {
    process.stdout.write("tmux is not installed: the ahp-term tmux tests are skipped (.ci/run installs it)\n");
    return false;
  }
})();

const RUNNER_TOKEN = "tmux-runner-token";
const GATEWAY_TOKEN = "tmux-gateway-token";
const BIN = join(ROOT, "bin/ahp-term.js");
/** The runner label a gateway keeps a terminal's URI in (docs/gateway.md). */
const LABEL_URI = "ahp.uri";

/** A port free now, for a gateway that must come back at the same address after a restart. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let runner: RunnerProcess;
let gateway: ServiceProcess;
let port: number;
let home: string;
const url = (): string => `ws://127.0.0.1:${port}/?tkn=${GATEWAY_TOKEN}`;
/** The compiled gateway, as npm start runs it, on the same port every time. */
const startGateway = (): Promise<ServiceProcess> =>
  startServiceProcess("gateway/main.ts", ["--port", String(port), "--runner", runner.url, "--token", GATEWAY_TOKEN], { RUNNER_TOKEN, HOME: home }, { compiled: true });

const panes: TmuxPane[] = [];
/** ahp-term `args` in a tmux pane of `size`; its stderr goes to a file (returned), so the pane shows the terminal alone. */
async function inPane(args: string, size: { cols: number; rows: number }, env: NodeJS.ProcessEnv = {}): Promise<{ pane: TmuxPane; stderr: () => string }> {
  const errors = join(mkdtempSync(join(tmpdir(), "ahp-term-tmux-")), "stderr");
  const pane = await TmuxPane.start(`${process.execPath} ${BIN} ${args} 2>${errors}`, size, { AHP_URL: url(), ...env });
  panes.push(pane);
  return { pane, stderr: () => (readFileSync(errors, { encoding: "utf8", flag: "a+" }) as string) };
}

/** What a terminal that started at `start` shows, from the runner's whole retained output with its size changes: the truth a pane is held to. */
async function truth(uri: string, start: { cols: number; rows: number }): Promise<string[]> {
  const client = runner.client(RUNNER_TOKEN);
  const { terminals } = await client.list({});
  const { id } = terminals.find((terminal) => terminal.labels[LABEL_URI] === uri)!;
  return screenCells(await emulate(start, (await retainedInputs(client, id)).inputs));
}

/** Waits until the pane shows what the terminal shows; returns both for the assertion that follows. */
async function settled(pane: TmuxPane, uri: string, start: { cols: number; rows: number }): Promise<{ pane: string[]; terminal: string[] }> {
  let last = { pane: [] as string[], terminal: [] as string[] };
  await eventually(async () => {
    last = { terminal: await truth(uri, start), pane: await pane.cells() };
    return JSON.stringify(last.pane) === JSON.stringify(last.terminal);
  }, 15_000).catch(() => undefined);
  return last;
}

/** A terminal of `start` running `argv` (named `name`), resized by another client once it printed `ready` (and, when given, `redrawn` after that); its URI. */
async function resizedTerminal(options: { name?: string; argv: string[]; start: { cols: number; rows: number }; ready: RegExp; resized: { cols: number; rows: number }; redrawn?: RegExp }): Promise<string> {
  const client = await AhpTestClient.initialized(url());
  const uri = `ahp-terminal:/${options.name ?? "t"}-${crypto.randomUUID()}`;
  await client.call("createTerminal", { channel: uri, ...(options.name ? { name: options.name } : {}), ...options.start, _meta: { "ahp.argv": options.argv } });
  await client.call("subscribe", { channel: uri });
  await client.waitForOutput(uri, options.ready);
  client.dispatch(uri, { type: "terminal/resized", ...options.resized });
  if (options.redrawn) await client.waitForOutput(uri, options.redrawn);
  client.close();
  return uri;
}

describe.runIf(hasTmux)("ahp-term attach in tmux", () => {
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "ahp-term-tmux-home-"));
    runner = await startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN], { SHELL: "/bin/sh", HOME: home, ENV: "", PS1: "$ ", TERM: "xterm-256color" });
    port = await freePort();
    gateway = await startGateway();
  }, 60_000);
  afterAll(async () => {
    for (const pane of panes) await pane.kill();
    await gateway?.stop("SIGKILL");
    await runner?.stop();
  });

  it("restores a screen whose transcript, replayed at the new size, would put things elsewhere", async () => {
    const start = { cols: 100, rows: 30 };
    const uri = await resizedTerminal({ name: "partial", argv: ["bash", "-c", PARTIAL_REDRAW], start, ready: /low-row/, resized: { cols: 80, rows: 24 }, redrawn: /resized to 24 80/ });
    // Attached by title, in a pane of the terminal's size now: nothing redraws, the pane is the restored screen.
    const { pane } = await inPane("attach partial", { cols: 80, rows: 24 });
    const { pane: shown, terminal } = await settled(pane, uri, start);
    expect(shown).toEqual(terminal);
    expect(shown.join("\n")).toContain("resized to 24 80");
  }, 30_000);

  it("shows top as it is after a resize, re-attached in a pane of another size", async () => {
    const start = { cols: 120, rows: 40 };
    // A long delay: top draws when it starts and on each size change, so the screen holds still to be compared.
    const uri = await resizedTerminal({ argv: ["top", "-d", "100"], start, ready: /PID/, resized: { cols: 90, rows: 28 } });
    const { pane } = await inPane(`attach ${uri.slice(0, 24)}`, { cols: 70, rows: 20 });
    const { pane: shown, terminal } = await settled(pane, uri, start);
    expect(shown).toEqual(terminal);
    expect(shown.join("\n")).toContain("PID");
  }, 30_000);

  it("survives a kill -9 and restart of the gateway: says so, keeps the keys typed meanwhile, and carries on", async () => {
    const created = execFileSync(process.execPath, [BIN, "new", "--name", "survivor"], { env: { ...process.env, AHP_URL: url(), TERM: "tmux-256color" } }).toString().trim();
    const { pane, stderr } = await inPane("attach survivor", { cols: 80, rows: 24 });
    // The shell's prompt ("$ ", its blank trimmed by tmux).
    expect(await eventually(async () => (await pane.text()).startsWith("$"), 10_000)).toBe(true);
    await pane.type("echo TERM=$TERM\r");
    expect(await eventually(async () => (await pane.text()).includes("TERM=tmux-256color"))).toBe(true);
    await gateway.stop("SIGKILL");
    expect(await eventually(() => stderr().includes("reconnecting"), 10_000)).toBe(true);
    await pane.type("echo typed-while-away-$((6*7))\r");
    gateway = await startGateway();
    expect(await eventually(async () => (await pane.text()).includes("typed-while-away-42"), 20_000)).toBe(true);
    expect(stderr()).toContain("reconnected");
    await pane.type("echo after-$((1+1))\r");
    expect(await eventually(async () => (await pane.text()).includes("after-2"))).toBe(true);
    expect(await pane.running()).toBe(true);
    // It ends when the terminal does, with its exit status.
    await pane.type("exit 7\r");
    expect(await eventually(async () => (await pane.exitStatus()) !== undefined, 10_000)).toBe(true);
    expect(await pane.exitStatus()).toBe(7);
    expect(created).toMatch(/^ahp-terminal:\//);
  }, 60_000);

  it("ends, saying so, when the terminal is gone once the gateway is back", async () => {
    const uri = execFileSync(process.execPath, [BIN, "new", "--name", "doomed"], { env: { ...process.env, AHP_URL: url() } }).toString().trim();
    const { pane, stderr } = await inPane("attach doomed", { cols: 80, rows: 24 });
    expect(await eventually(async () => (await pane.text()).startsWith("$"), 10_000)).toBe(true);
    await gateway.stop("SIGKILL");
    expect(await eventually(() => stderr().includes("reconnecting"), 10_000)).toBe(true);
    const client = runner.client(RUNNER_TOKEN);
    const { id } = (await client.list({})).terminals.find((terminal) => terminal.labels[LABEL_URI] === uri)!;
    await client.close({ id });
    gateway = await startGateway();
    expect(await eventually(async () => (await pane.exitStatus()) !== undefined, 20_000)).toBe(true);
    expect(await pane.exitStatus()).toBe(1);
    expect(stderr()).toContain(`[${uri} is gone]`);
  }, 60_000);
});
