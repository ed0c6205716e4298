import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, useRunnerProcess } from "./runner-process.js";

const run = promisify(execFile);
const TOKEN = "reflection-token";
const BUF = join(ROOT, "node_modules/.bin/buf");

// buf curl runs where there is no proto/ at all: everything it knows comes from the runner.
const elsewhere = mkdtempSync(join(tmpdir(), "no-protos-"));
afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));
const runner = useRunnerProcess(["--port", "0"], { RUNNER_TOKEN: TOKEN });
const open = useRunnerProcess(["--port", "0", "--open-reflection"], { RUNNER_TOKEN: TOKEN });

/** `buf curl` with server reflection (no --schema) over h2c; resolves with stdout, rejects with the exit code and stderr. */
async function bufCurl(args: string[]): Promise<string> {
  const { stdout } = await run(BUF, ["curl", "--http2-prior-knowledge", ...args], { cwd: elsewhere });
  return stdout;
}

const reflectWithToken = ["--reflect-header", `Authorization: Bearer ${TOKEN}`];

describe("buf curl without --schema, through the runner's reflection", () => {
  it("lists the services and the methods", async () => {
    expect((await bufCurl([...reflectWithToken, "--list-services", runner.url])).trim().split("\n")).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "terminal.v1.TerminalService",
    ]);
    const methods = (await bufCurl([...reflectWithToken, "--list-methods", runner.url])).trim().split("\n");
    expect(methods).toEqual(expect.arrayContaining(["terminal.v1.TerminalService/Spawn", "terminal.v1.TerminalService/Attach", "terminal.v1.TerminalService/List", "grpc.health.v1.Health/Check"]));
  });

  it("calls Spawn, Attach and List with the schema it fetched", async () => {
    const call = (method: string, body: object, protocol = "connect") =>
      bufCurl(["--protocol", protocol, "-H", `Authorization: Bearer ${TOKEN}`, "--reflect-header", "*", "-d", JSON.stringify(body), `${runner.url}/terminal.v1.TerminalService/${method}`]);
    const spawned = JSON.parse(await call("Spawn", { id: "reflected", argv: ["echo", "found by reflection"], labels: { via: "reflection" } })) as unknown;
    expect(spawned).toMatchObject({ terminal: { id: "reflected", isPty: true, state: "TERMINAL_STATE_RUNNING" } });
    const events = (await call("Attach", { id: "reflected", follow: true }, "grpc")).split(/\n(?=\{)/).map((doc) => JSON.parse(doc) as { output?: { data: string }; exited?: unknown });
    expect(events.map((event) => Buffer.from(event.output?.data ?? "", "base64").toString()).join("")).toBe("found by reflection\r\n");
    expect(events.at(-1)?.exited).toBeDefined();
    expect(JSON.parse(await call("List", { labelSelector: { via: "reflection" } }))).toMatchObject({ terminals: [{ id: "reflected", state: "TERMINAL_STATE_EXITED", exitCode: 0 }] });
  });

  it("speaks the older v1alpha protocol when asked to", async () => {
    expect(await bufCurl([...reflectWithToken, "--reflect-protocol", "grpc-v1alpha", "--list-services", runner.url])).toContain("terminal.v1.TerminalService");
  });

  it("needs the token for reflection, unless the runner was started with --open-reflection", async () => {
    const refused = await bufCurl(["--list-services", runner.url]).catch((err: { code: number; stderr: string }) => err);
    // buf curl words an UNAUTHENTICATED answer to reflection as a Buf registry login problem.
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/not authenticated/) });
    expect(await bufCurl(["--list-services", open.url])).toContain("terminal.v1.TerminalService");
    // The schema is open there; the terminals are not.
    const call = await bufCurl(["-d", "{}", `${open.url}/terminal.v1.TerminalService/List`]).catch((err: { code: number; stderr: string }) => err);
    // buf curl exits with the gRPC code times 8 when the call itself fails: UNAUTHENTICATED is 16.
    expect(call).toMatchObject({ code: 16 * 8 });
  });
});
