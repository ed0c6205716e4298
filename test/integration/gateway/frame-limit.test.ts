import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_FRAME_BYTES } from "../../../gateway/config.js";
import { AhpTestClient } from "../../support/ahp-test-client.js";
import { useTestGateway } from "./harness.js";

const gateway = useTestGateway({ maxFrameBytes: DEFAULT_MAX_FRAME_BYTES });

describe("the default frame limit", () => {
  it("closes the socket with 1009 on one byte more, and the gateway serves on", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    const head = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"';
    client.sendRaw(`${head}${"x".repeat(DEFAULT_MAX_FRAME_BYTES + 1 - head.length - 3)}"}}`);
    expect(await client.closed()).toBe(1009);
    const next = await AhpTestClient.initialized(gateway.url);
    expect(await next.call("ping")).toBeNull();
    next.close();
  });

  it("takes a pasted megabyte of characters of three UTF-8 bytes each in one frame, and the terminal gets all of it", async () => {
    const uri = "ahp-terminal:/paste";
    const client = await AhpTestClient.initialized(gateway.url);
    await client.call("createTerminal", { channel: uri });
    await client.call("subscribe", { channel: uri });
    // The marker is printed once echo is off (the echoed line shows it unexpanded), just before wc reads.
    client.dispatch(uri, { type: "terminal/input", data: "stty -echo; echo echo-off-$((1+1)); wc -c; echo counted-$((1+1))\r" });
    await client.waitForOutput(uri, /echo-off-2\r\n/);
    // 1 Mi characters in lines short enough for the terminal's line editing, then end of input.
    const line = `${"漢".repeat(1023)}\n`;
    const paste = line.repeat(1024);
    const frame = JSON.stringify({ jsonrpc: "2.0", method: "dispatchAction", params: { channel: uri, clientSeq: 99, action: { type: "terminal/input", data: paste } } });
    expect(paste.length).toBe(1024 * 1024);
    expect(Buffer.byteLength(frame)).toBeLessThan(DEFAULT_MAX_FRAME_BYTES);
    client.sendRaw(frame);
    client.dispatch(uri, { type: "terminal/input", data: "\u0004" });
    const output = await client.waitForOutput(uri, /counted-2/, 30_000);
    expect(output).toContain(String(Buffer.byteLength(paste)));
    expect(client.closeCode).toBeUndefined();
    client.close();
  }, 40_000);
});
