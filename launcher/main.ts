import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

/** `npm start`: the runner and the gateway as two processes sharing a freshly generated runner token. */
const USAGE = `Usage: npm start -- [--host HOST] [--port PORT] [--runner-port PORT]
  --host HOST          address the gateway binds (default 127.0.0.1; the runner always binds loopback)
  --port PORT          the gateway's port (default 7071)
  --runner-port PORT   the runner's port (default 7070)
Other settings come from the environment the two processes inherit (GATEWAY_TOKEN, SHELL, ...).`;

/** How long children get after SIGTERM before they are killed. */
const STOP_GRACE_MS = 10_000;

function startChild(name: string, entry: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; address: Promise<string> } {
  const child = spawn(process.execPath, ["--import", "tsx", entry, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const address = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code} before it was ready`)));
  });
  return { child, address };
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: { host: { type: "string", default: "127.0.0.1" }, port: { type: "string", default: "7071" }, "runner-port": { type: "string", default: "7070" }, help: { type: "boolean" } },
    }));
  } catch (err) {
    process.stderr.write(`start: ${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  const runnerToken = randomBytes(24).toString("base64url");
  const runner = startChild("runner", "services/runner/main.ts", ["--port", values["runner-port"]], { RUNNER_TOKEN: runnerToken });
  const children = [runner.child];
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    for (const child of children) child.kill(signal);
    setTimeout(() => children.forEach((child) => child.kill("SIGKILL")), STOP_GRACE_MS).unref();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  try {
    const runnerUrl = await runner.address;
    const gateway = startChild("gateway", "gateway/main.ts", ["--host", values.host, "--port", values.port, "--runner", runnerUrl], { RUNNER_TOKEN: runnerToken });
    children.push(gateway.child);
    process.stdout.write(`${await gateway.address}\n`);
  } catch (err) {
    process.stderr.write(`start: ${(err as Error).message}\n`);
    stop("SIGTERM");
    process.exitCode = 1;
  }
  for (const child of children) {
    child.once("exit", (code, signal) => {
      if (!stopping) {
        process.stderr.write(`start: ${child === runner.child ? "runner" : "gateway"} stopped unexpectedly (${signal ?? code}); stopping\n`);
        process.exitCode = 1;
        stop("SIGTERM");
      }
    });
  }
  await Promise.all(children.map((child) => (child.exitCode !== null ? undefined : new Promise((resolve) => child.once("exit", resolve)))));
}

await main();
