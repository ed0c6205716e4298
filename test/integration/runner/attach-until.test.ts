import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { TerminalState, type AttachResponse } from "../../../gen/terminal/v1/terminal_pb.js";
import { collect, runToExit, useTestRunner, waitForOutput } from "./harness.js";

const runner = useTestRunner({ retainBytes: 64 * 1024 });

/** An OSC sequence ended by BEL, as printf writes it. */
const osc = (body: string): string => `\x1b]${body}\x07`;

/** The output events of a stream: their bytes as text and the offset each ends at. */
function outputs(events: readonly AttachResponse[]): Array<{ text: string; end: number }> {
  return events.flatMap((event) => (event.event.case === "output" ? [{ text: Buffer.from(event.event.value.data).toString(), end: Number(event.event.value.endOffset) }] : []));
}

/** Spawns a pty command and waits for it to exit, so its whole output is in the log. */
async function finished(command: string): Promise<string> {
  const { terminal } = await runner.grpc.spawn({ command });
  await runToExit(runner.grpc, terminal!.id);
  return terminal!.id;
}

describe("Attach until_offset (real ptys)", () => {
  it("cuts an output chunk exactly at the offset and ends without the events after it", async () => {
    const id = await finished("printf abcdefghij");
    const whole = await collect(runner.grpc.attach({ id }));
    expect(outputs(whole.events)).toEqual([{ text: "abcdefghij", end: 10 }]);
    const cut = await collect(runner.grpc.attach({ id, fromOffset: 2n, untilOffset: 7n, follow: true }));
    expect(outputs(cut.events)).toEqual([{ text: "cdefg", end: 7 }]);
    expect(cut.events.map((event) => event.event.case)).toEqual(["output"]);
    const rest = await collect(runner.grpc.attach({ id, fromOffset: 7n, follow: true }));
    expect(rest.output.toString()).toBe("hij");
    expect(rest.exit).toBeDefined();
  });

  it("sends nothing when until_offset equals from_offset", async () => {
    const id = await finished("printf abcdefghij");
    const none = await collect(runner.grpc.attach({ id, fromOffset: 4n, untilOffset: 4n, follow: true }));
    expect(none.events).toEqual([]);
  });

  it("counts the left-out shell marks in the offsets it stops at, also inside a mark", async () => {
    const marked = `one${osc("133;C")}two${osc("133;D;0")}three`;
    const id = await finished(`printf '${marked.replace(/\x1b/g, "\\033").replace(/\x07/g, "\\007")}'`);
    const raw = await collect(runner.grpc.attach({ id }));
    expect(raw.output.toString()).toBe(marked);
    const insideTwo = marked.indexOf("two") + 2;
    const toTw = await collect(runner.grpc.attach({ id, untilOffset: BigInt(insideTwo), follow: true, stripShellMarks: true }));
    expect(toTw.output.toString()).toBe("onetw");
    expect(outputs(toTw.events).at(-1)?.end).toBe(insideTwo);
    const insideMark = marked.indexOf(osc("133;D;0")) + 3;
    const toMark = await collect(runner.grpc.attach({ id, fromOffset: BigInt(insideTwo), untilOffset: BigInt(insideMark), follow: true, stripShellMarks: true }));
    expect(toMark.output.toString()).toBe("o");
    expect(outputs(toMark.events).at(-1)?.end).toBe(insideMark);
    expect(toMark.exit).toBeUndefined();
  });

  it("with follow waits for output to reach an offset past the end, then ends while the process still runs", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "printf 12345; read -r line; printf 67890; sleep 30" });
    const id = terminal!.id;
    await waitForOutput(runner.grpc, id, /12345/);
    const stream = collect(runner.grpc.attach({ id, untilOffset: 8n, follow: true }));
    let ended = false;
    void stream.then(() => (ended = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ended).toBe(false);
    await runner.grpc.write({ id, data: Buffer.from("go\r") });
    const cut = await stream;
    // The echo of the line typed ("go\r\n") comes first: 12345go\r\n is 9 bytes, so the cut falls inside the echo.
    expect(cut.output.toString()).toBe("12345go\r");
    expect(cut.exit).toBeUndefined();
    expect((await runner.grpc.get({ id })).terminal?.state).toBe(TerminalState.RUNNING);
    await runner.grpc.close({ id });
  });

  it("refuses an until_offset before from_offset with INVALID_ARGUMENT", async () => {
    const id = await finished("printf abcdefghij");
    const refused = await collect(runner.connect.attach({ id, fromOffset: 6n, untilOffset: 5n })).catch((err: unknown) => ConnectError.from(err));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.InvalidArgument);
    expect((refused as ConnectError).rawMessage).toMatch(/until_offset 5 is before from_offset 6/);
  });
});
