import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AhpTestClient, rpcErrorOf } from "../../support/ahp-test-client.js";
import { useTestGateway } from "./harness.js";

const gateway = useTestGateway({ maxFrameBytes: 16 * 1024 * 1024, terminalLimits: { perConnection: 2, perUser: 3 } });

/** Milliseconds a `ping` takes to be answered. */
async function pingMs(client: AhpTestClient): Promise<number> {
  const started = performance.now();
  await client.call("ping");
  return performance.now() - started;
}

describe("frames nested too deep", () => {
  it("are refused with -32600 before parsing, before any handshake, without stalling another connection", async () => {
    const attacker = await AhpTestClient.connect(gateway.url);
    const bystander = await AhpTestClient.initialized(gateway.url);
    // Ten million bytes: five million nested arrays.
    const bomb = `${"[".repeat(5_000_000)}${"]".repeat(5_000_000)}`;
    const answered = attacker.waitFor((frame) => (frame as { error?: unknown }).error !== undefined, 5_000);
    const sentAt = performance.now();
    attacker.sendRaw(bomb);
    const pings = await Promise.all([pingMs(bystander), pingMs(bystander), pingMs(bystander)]);
    expect(await answered).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: nested deeper than 128 levels" } });
    expect(performance.now() - sentAt).toBeLessThan(1_000);
    expect(Math.max(...pings)).toBeLessThan(500);
    // An object nested deeply inside a request is refused the same way; brackets inside strings do not count.
    const deep = `{"jsonrpc":"2.0","id":7,"method":"ping","params":${"{\"a\":".repeat(200)}1${"}".repeat(200)}}`;
    attacker.sendRaw(deep);
    expect(await attacker.waitFor((frame) => (frame as { error?: { message?: string } }).error?.message?.includes("nested") === true && (frame as { id?: unknown }).id === null)).toBeDefined();
    const call = bystander.call("ping", { text: "[".repeat(10_000) });
    expect(await call).toBeNull();
    attacker.close();
    bystander.close();
  });
});

describe("frames of too many values", () => {
  it("are refused with -32600 before parsing, and the connection and the gateway go on", async () => {
    const attacker = await AhpTestClient.connect(gateway.url);
    const bystander = await AhpTestClient.initialized(gateway.url);
    // Sixteen megabytes of empty objects, five million of them, in a ping.
    const flood = `{"jsonrpc":"2.0","id":1,"method":"ping","params":[${"{},".repeat(5_000_000)}{}]}`;
    const answered = attacker.waitFor((frame) => (frame as { error?: unknown }).error !== undefined || (frame as { result?: unknown }).result !== undefined, 10_000);
    attacker.sendRaw(flood);
    expect(await answered).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: more than 100000 JSON values" } });
    expect(await bystander.call("ping")).toBeNull();
    // The same frame's length in one string is a legitimate message, and a list of some thousands too.
    expect(await attacker.call("ping", { text: "{},".repeat(5_000_000) })).toBeNull();
    expect(await attacker.call("ping", { channels: Array.from({ length: 5_000 }, (_, i) => `ahp-terminal:/t${i}`) })).toBeNull();
    attacker.close();
    bystander.close();
  });
});

describe("createTerminal", () => {
  it("refuses URIs with controls, whitespace, bidi overrides or over 2 KiB, and names over 4 KiB, with -32602 and nothing listed", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    const bad = ["ahp-terminal:/nul\u0000", "ahp-terminal:/a b", "ahp-terminal:/esc\u001b[2J", "ahp-terminal:/tab\t", "ahp-terminal:/next\u0085line", "ahp-terminal:/\u202egnp.exe", `ahp-terminal:/${"x".repeat(100_000)}`];
    for (const channel of bad) {
      const error = await rpcErrorOf(client.call("createTerminal", { channel }));
      expect(error.code, JSON.stringify(channel).slice(0, 40)).toBe(-32602);
      expect(error.message).toMatch(/terminal URI/);
      expect(error.message.length).toBeLessThan(300);
    }
    expect((await rpcErrorOf(client.call("createTerminal", { channel: "ahp-terminal:/long-name", name: "n".repeat(100_000) }))).message).toMatch(/name: a title is at most 4096 characters/);
    expect((await client.call("subscribe", { channel: "ahp-root://" })).snapshot.state.terminals).toEqual([]);
    // The longest allowed URI works.
    const longest = `ahp-terminal:/${"u".repeat(2048 - "ahp-terminal:/".length)}`;
    await client.call("createTerminal", { channel: longest });
    await client.call("disposeTerminal", { channel: longest });
    client.close();
  });

  it("refuses a title over 4 KiB or with controls set by dispatch", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    const channel = "ahp-terminal:/titles";
    await client.call("createTerminal", { channel });
    await client.call("subscribe", { channel });
    for (const title of ["t".repeat(4097), "evil\u001b]0;owned\u0007"]) {
      const seq = client.dispatch(channel, { type: "terminal/titleChanged", title });
      expect((await client.waitForEnvelope((envelope) => envelope.origin?.clientSeq === seq)).rejectionReason).toMatch(/a title/);
    }
    const seq = client.dispatch(channel, { type: "terminal/titleChanged", title: "t".repeat(4096) });
    expect((await client.waitForEnvelope((envelope) => envelope.origin?.clientSeq === seq)).rejectionReason).toBeUndefined();
    await client.call("disposeTerminal", { channel });
    client.close();
  });

  it("holds each connection and each person to their terminal limits; a disposed terminal frees its slot", async () => {
    const first = await AhpTestClient.initialized(gateway.url);
    const second = await AhpTestClient.initialized(gateway.url);
    await first.call("createTerminal", { channel: "ahp-terminal:/cap-1" });
    await first.call("createTerminal", { channel: "ahp-terminal:/cap-2" });
    const perConnection = await rpcErrorOf(first.call("createTerminal", { channel: "ahp-terminal:/cap-3" }));
    expect(perConnection).toMatchObject({ code: -32009, message: expect.stringMatching(/this connection has 2 terminals open.*--max-terminals-per-connection/) });
    // Without a users file every connection acts for the token's holder: one person, three terminals.
    await second.call("createTerminal", { channel: "ahp-terminal:/cap-3" });
    const perUser = await rpcErrorOf(second.call("createTerminal", { channel: "ahp-terminal:/cap-4" }));
    expect(perUser).toMatchObject({ code: -32009, message: expect.stringMatching(/has 3 terminals open.*--max-terminals-per-user/) });
    await first.call("disposeTerminal", { channel: "ahp-terminal:/cap-1" });
    await second.call("createTerminal", { channel: "ahp-terminal:/cap-4" });
    for (const channel of ["ahp-terminal:/cap-2", "ahp-terminal:/cap-3", "ahp-terminal:/cap-4"]) await first.call("disposeTerminal", { channel });
    first.close();
    second.close();
  });

  it("checks a defaultShell again at every createTerminal: a script made writable or removed after it was pushed is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "default-shell-"));
    const shell = join(dir, "shell.sh");
    writeFileSync(shell, "#!/bin/sh\necho from-the-checked-shell\nexec /bin/sh\n", { mode: 0o755 });
    const client = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    const seq = client.dispatch("ahp-root://", { type: "root/configChanged", config: { defaultShell: shell } });
    expect((await client.waitForEnvelope((envelope) => envelope.origin?.clientSeq === seq)).rejectionReason).toBeUndefined();
    await client.call("createTerminal", { channel: "ahp-terminal:/checked-shell" });
    await client.call("subscribe", { channel: "ahp-terminal:/checked-shell" });
    await client.waitForOutput("ahp-terminal:/checked-shell", /from-the-checked-shell/);
    await client.call("disposeTerminal", { channel: "ahp-terminal:/checked-shell" });

    chmodSync(shell, 0o777);
    const writable = await rpcErrorOf(client.call("createTerminal", { channel: "ahp-terminal:/swapped-shell" }));
    expect(writable).toMatchObject({ code: -32602, message: expect.stringMatching(/writable by its group or others/) });
    rmSync(shell);
    expect(await rpcErrorOf(client.call("createTerminal", { channel: "ahp-terminal:/gone-shell" }))).toMatchObject({ code: -32602, message: expect.stringMatching(/does not exist/) });
    expect((await client.call("subscribe", { channel: "ahp-root://" })).snapshot.state.terminals).toEqual([]);
    client.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
