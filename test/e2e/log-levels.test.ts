import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { AhpTestClient, RpcFailure } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { startServiceProcess, type ServiceProcess } from "./service-process.js";

const RUNNER_TOKEN = "log-levels-runner-token";
/** pino's numbers for the levels the tests look for. */
const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;
/** How long a process gets to log what a peer did, before a test reads its lines. */
const SETTLE_MS = 500;

const running: ServiceProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((service) => service.stop("SIGKILL")));
});

type LogLine = Record<string, unknown> & { level: number; msg: string };

/** A process's stderr as parsed JSON lines. */
function logLines(service: ServiceProcess): LogLine[] {
  return service.stderrLines.map((line) => JSON.parse(line) as LogLine);
}

const home = mkdtempSync(join(tmpdir(), "log-levels-"));
const SHELL_ENV = { SHELL: "/bin/sh", HOME: home, ENV: "", PS1: "$ " };

/** The compiled runner at `--log-level debug`, as it is deployed. */
async function debugRunner(): Promise<RunnerProcess> {
  const runner = await startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN, "--log-level", "debug"], SHELL_ENV, { compiled: true });
  running.push(runner);
  return runner;
}

async function gatewayFor(runner: RunnerProcess, args: string[] = []): Promise<ServiceProcess> {
  const gateway = await startServiceProcess("gateway/main.ts", ["--port", "0", "--runner", runner.url, ...args], { RUNNER_TOKEN, HOME: home }, { compiled: true });
  running.push(gateway);
  return gateway;
}

/** Opens a terminal through `gateway` and types into it, so the runner holds an input stream from the gateway. */
async function typeInto(gateway: ServiceProcess, uri: string): Promise<AhpTestClient> {
  const client = await AhpTestClient.initialized(gateway.firstLine);
  await client.call("createTerminal", { channel: uri });
  await client.call("subscribe", { channel: uri });
  client.dispatch(uri, { type: "terminal/input", data: "echo typed-$((2+2))\r" });
  await client.waitForOutput(uri, /typed-4\r\n/);
  return client;
}

describe("a peer going away", () => {
  it("is a debug line on the runner, never an error, when the gateway is killed or restarted while input streams are open", async () => {
    const runner = await debugRunner();
    const killed = await gatewayFor(runner);
    await typeInto(killed, "ahp-terminal:/killed");
    await killed.stop("SIGKILL");
    const restarted = await gatewayFor(runner);
    await typeInto(restarted, "ahp-terminal:/restarted");
    await restarted.stop("SIGTERM");
    const gone = (): LogLine[] => logLines(runner).filter((line) => line.msg === "the caller went away during the call");
    // The kill cuts the input stream mid-call; a graceful stop may end it first.
    expect(await eventually(() => gone().length >= 1)).toBe(true);
    expect(gone().every((line) => line.level === LEVEL.debug && line.rpc === "WriteStream")).toBe(true);
    await delay(SETTLE_MS);
    expect(logLines(runner).filter((line) => line.level >= LEVEL.warn && !/inherited without close-on-exec/.test(line.msg))).toEqual([]);
  });

  it("is an info line on the gateway when the runner goes away, then debug while it stays away, never a warning or an error", async () => {
    const runner = await debugRunner();
    const gateway = await gatewayFor(runner, ["--log-level", "debug"]);
    await typeInto(gateway, "ahp-terminal:/runner-gone");
    const before = gateway.stderrLines.length;
    await runner.stop("SIGKILL");
    const after = (): LogLine[] => logLines(gateway).slice(before);
    expect(await eventually(() => after().some((line) => line.msg === "runner stream still broken; re-attaching"), 10_000)).toBe(true);
    expect(after().filter((line) => line.msg === "runner stream broke; re-attaching")).toEqual([expect.objectContaining({ level: LEVEL.info })]);
    expect(after().filter((line) => line.msg === "runner stream still broken; re-attaching").every((line) => line.level === LEVEL.debug)).toBe(true);
    expect(after().filter((line) => line.level >= LEVEL.warn)).toEqual([]);
  });
});

describe("refusals", () => {
  it("the runner warns of a missing or wrong token and of a run_as it may not honour, with the address and reason, one line per kind per interval", async () => {
    const runner = await debugRunner();
    for (const token of ["wrong-token", "another-wrong-token", "wrong-again"]) await runner.client(token).list({}).catch(() => undefined);
    await runner.client().list({}).catch(() => undefined);
    await runner.client(RUNNER_TOKEN).spawn({ argv: ["/bin/true"], runAs: "nobody" }).catch(() => undefined);
    await delay(SETTLE_MS);
    const refused = logLines(runner).filter((line) => line.level === LEVEL.warn && String(line.msg).startsWith("refused a call"));
    expect(refused).toEqual([
      expect.objectContaining({ msg: "refused a call: missing or wrong bearer token", address: expect.stringMatching(/127\.0\.0\.1$/), rpc: "terminal.v1.TerminalService/List", reason: "wrong bearer token" }),
      expect.objectContaining({ msg: "refused a call the caller may not make", address: expect.stringMatching(/127\.0\.0\.1$/), rpc: "terminal.v1.TerminalService/Spawn", reason: expect.stringContaining("start it with --allow-run-as") }),
    ]);
    expect(runner.stderrLines.join("\n")).not.toContain("wrong-token");
  });

  it("the gateway warns of a wrong connection token, a wrong sign-in secret and a permission denial, with the address and reason", async () => {
    const runner = await debugRunner();
    const secrets = { alice: "alice-secret-1234567890", bob: "bob-secret-1234567890" };
    const usersFile = join(home, "users.json");
    const hashed = (secret: string) => `sha256:${createHash("sha256").update(secret).digest("hex")}`;
    writeFileSync(usersFile, JSON.stringify({ users: Object.entries(secrets).map(([id, secret]) => ({ id, roles: ["member"], token: hashed(secret) })) }), { mode: 0o600 });
    const gateway = await gatewayFor(runner, ["--users", usersFile]);
    const badUrl = gateway.firstLine.replace(/tkn=[^&]*/, "tkn=not-the-token");
    for (let i = 0; i < 3; i++) await expect(AhpTestClient.connect(badUrl)).rejects.toThrow(/401/);

    const alice = await AhpTestClient.initialized(gateway.firstLine);
    await alice.call("authenticate", { resource: "ahp-terminal-gateway", token: secrets.alice });
    await alice.call("createTerminal", { channel: "ahp-terminal:/alice" });
    const bob = await AhpTestClient.initialized(gateway.firstLine);
    await expect(bob.call("authenticate", { resource: "ahp-terminal-gateway", token: "guessed-secret" })).rejects.toBeInstanceOf(RpcFailure);
    await bob.call("authenticate", { resource: "ahp-terminal-gateway", token: secrets.bob });
    await expect(bob.call("subscribe", { channel: "ahp-terminal:/alice" })).rejects.toMatchObject({ error: { code: -32009 } });
    await delay(SETTLE_MS);

    const warnings = logLines(gateway).filter((line) => line.level === LEVEL.warn && String(line.msg).startsWith("refused"));
    const address = expect.stringMatching(/127\.0\.0\.1$/);
    expect(warnings).toEqual([
      expect.objectContaining({ msg: "refused a WebSocket: missing or wrong connection token", address, reason: "wrong token" }),
      expect.objectContaining({ msg: "refused a sign-in: no user has that secret", address, method: "authenticate", reason: "Wrong token" }),
      expect.objectContaining({ msg: "refused a request the connection may not make", address, method: "subscribe", user: "bob", reason: expect.stringContaining("belongs to another person") }),
    ]);
    const all = gateway.stderrLines.join("\n");
    for (const secret of ["not-the-token", "guessed-secret", secrets.alice, secrets.bob]) expect(all).not.toContain(secret);
    alice.close();
    bob.close();
  });
});

describe("what a spawn logs", () => {
  it("says at info which terminal started, and only at debug its argv and environment, without the values of secret-looking variables", async () => {
    const runner = await debugRunner();
    await runner.client(RUNNER_TOKEN).spawn({ argv: ["/bin/echo", "visible-argument"], env: { API_TOKEN: "tok-value-1", DB_PASSWORD: "pw-value-2", AWS_SECRET_ACCESS_KEY: "key-value-3", EDITOR: "vi" } });
    await delay(SETTLE_MS);
    const lines = logLines(runner);
    const info = lines.find((line) => line.msg === "spawned")!;
    expect(info.level).toBe(LEVEL.info);
    expect(JSON.stringify(info)).not.toContain("visible-argument");
    const debug = lines.find((line) => line.msg === "spawned with")!;
    expect(debug).toMatchObject({
      level: LEVEL.debug,
      argv: ["/bin/echo", "visible-argument"],
      env: { API_TOKEN: "[redacted]", DB_PASSWORD: "[redacted]", AWS_SECRET_ACCESS_KEY: "[redacted]", EDITOR: "vi" },
    });
    expect(runner.stderrLines.join("\n")).not.toMatch(/tok-value-1|pw-value-2|key-value-3/);
  });
});
