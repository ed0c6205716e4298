import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { ROOT, useRunnerProcess } from "./runner-process.js";

const run = promisify(execFile);
const TOKEN = "runner-api-token";

const runner = useRunnerProcess(["--port", "0"], { RUNNER_TOKEN: TOKEN });

/** Runs the `buf curl` form of docs/runner-api.md against the live runner and parses its JSON documents. */
async function bufCurl(method: string, body: object, protocol: "grpc" | "connect" = "grpc"): Promise<unknown[]> {
  const args = ["curl", "--http2-prior-knowledge", "--protocol", protocol, "--schema", "proto", "-H", `Authorization: Bearer ${TOKEN}`];
  const { stdout } = await run(join(ROOT, "node_modules/.bin/buf"), [...args, "-d", JSON.stringify(body), `${runner.url}/terminal.v1.TerminalService/${method}`], {
    cwd: ROOT,
  });
  return stdout.split(/\n(?=\{)/).filter((doc) => doc.trim()).map((doc) => JSON.parse(doc) as unknown);
}

describe("the buf curl examples of docs/runner-api.md against a running runner", () => {
  it("spawn, write, resize, attach (streaming), signal, labels, get, list, clear and close", async () => {
    const [spawned] = await bufCurl("Spawn", { id: "demo", command: "read name; echo hello $name; stty size; sleep 100", cols: 100, rows: 30, labels: { owner: "me" } });
    expect(spawned).toMatchObject({ terminal: { id: "demo", isPty: true, cols: 100, rows: 30, state: "TERMINAL_STATE_RUNNING" } });
    expect(await bufCurl("Resize", { id: "demo", cols: 120, rows: 40 })).toEqual([{}]);
    expect(await bufCurl("Write", { id: "demo", data: Buffer.from("world\r").toString("base64") }, "connect")).toEqual([{}]);
    // The shell has read the name and printed its answer and the new size.
    let replay: unknown[] = [];
    const answered = async (): Promise<boolean> => {
      replay = await bufCurl("Attach", { id: "demo", fromOffset: "0", follow: false });
      const text = replay.map((event) => (event as { output?: { data: string } }).output?.data ?? "").map((data) => Buffer.from(data, "base64").toString()).join("");
      return text.includes("hello world\r\n40 120\r\n");
    };
    expect(await eventually(answered, 10_000)).toBe(true);
    expect(replay.some((event) => (event as { resized?: unknown }).resized)).toBe(true);
    expect(await bufCurl("SetLabels", { id: "demo", set: { stage: "test" }, remove: ["owner"] })).toMatchObject([{ terminal: { labels: { stage: "test" } } }]);
    expect(await bufCurl("List", { labelSelector: { stage: "test" } })).toMatchObject([{ terminals: [{ id: "demo" }] }]);
    expect(await bufCurl("Clear", { id: "demo" })).toEqual([{}]);
    expect(await bufCurl("Signal", { id: "demo", signal: "SIGTERM", target: "SIGNAL_TARGET_GROUP" })).toEqual([{}]);
    const live = await bufCurl("Attach", { id: "demo", follow: true });
    expect(live.at(-1)).toMatchObject({ exited: { exitCode: 128, signal: "SIGTERM" } });
    expect(await bufCurl("Get", { id: "demo" })).toMatchObject([{ terminal: { state: "TERMINAL_STATE_EXITED", exitCode: 128 } }]);
    expect(await bufCurl("Close", { id: "demo" })).toMatchObject([{ terminal: { id: "demo" } }]);
  });

  it("reports errors as JSON with the code name", async () => {
    const error = await bufCurl("Get", { id: "missing" }).catch((err: { stderr: string; code: number }) => err);
    expect(error).toMatchObject({ code: 5 * 8 });
    expect(JSON.parse((error as { stderr: string }).stderr)).toMatchObject({ code: "not_found", message: 'no terminal with id "missing"' });
  });
});
