import { describe, expect, it } from "vitest";
import { AhpTestClient, contentText, rpcErrorOf } from "../../support/ahp-test-client.js";
import { eventually } from "../../support/eventually.js";
import { useTestGateway } from "./harness.js";
import { outputBytes } from "../../../services/runner/log/output-log.js";

const gateway = useTestGateway({ scrollbackChars: 50_000 });

let counter = 0;
const fresh = (scheme = "ahp-terminal:/"): string => `${scheme}t${++counter}`;

async function subscribed(client: AhpTestClient, uri: string): Promise<any> {
  return (await client.call("subscribe", { channel: uri })).snapshot.state;
}

describe("createTerminal", () => {
  it("starts a shell in the default directory at 80x24, claimed by the creating connection and listed on the root", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { clientId: "creator", subscribe: ["ahp-root://"] });
    const uri = fresh();
    expect(await client.call("createTerminal", { channel: uri })).toBeNull();
    const listed = await client.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes(uri));
    expect(listed.origin).toBeUndefined();
    const state = await subscribed(client, uri);
    expect(state).toMatchObject({ title: "sh", cwd: `file://${gateway.home}`, cols: 80, rows: 24, claim: { kind: "client", clientId: "creator" } });
    client.dispatch(uri, { type: "terminal/input", data: "pwd\r" });
    await client.waitForOutput(uri, new RegExp(`\\r\\n${gateway.home}\\r\\n`));
    client.close();
  });

  it("honours name, cwd (as a file: URI or a path), size and an explicit claim", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    for (const cwd of ["file:///tmp", "/tmp", "file:///etc"]) {
      const uri = fresh();
      await client.call("createTerminal", { channel: uri, name: "build", cwd, cols: 73, rows: 19, claim: { kind: "session", session: "ahp-session:/s", extra: 1 } });
      const state = await subscribed(client, uri);
      expect(state).toMatchObject({ title: "build", cwd: cwd.startsWith("file:") ? cwd : `file://${cwd}`, cols: 73, rows: 19, claim: { kind: "session", session: "ahp-session:/s" } });
      expect(state.claim).not.toHaveProperty("extra");
      client.dispatch(uri, { type: "terminal/input", data: "stty size; pwd\r" });
      await client.waitForOutput(uri, new RegExp(`19 73\\r\\n${cwd.replace("file://", "")}\\r\\n`));
    }
    client.close();
  });

  it("gives the terminal the client's TERM from _meta[\"ahp.term\"] where the runner's host describes it", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    for (const [term, seen] of [["screen-256color", "screen-256color"], ["no-such-terminal", "xterm"]]) {
      const uri = fresh();
      await client.call("createTerminal", { channel: uri, _meta: { "ahp.term": term, "ahp.argv": ["sh", "-c", 'echo "TERM=$TERM."; sleep 5'] } });
      await subscribed(client, uri);
      await client.waitForOutput(uri, /TERM=.*\./);
      const output = contentText((await client.call("subscribe", { channel: uri })).snapshot.state);
      if (seen === "xterm") expect(output).not.toContain("no-such-terminal");
      else expect(output).toContain(`TERM=${seen}.`);
    }
    for (const bad of ["../../etc/passwd", "", 7]) {
      expect((await rpcErrorOf(client.call("createTerminal", { channel: fresh(), _meta: { "ahp.term": bad } }))).code).toBe(-32602);
    }
    client.close();
  });

  it("accepts VS Code's agenthost-terminal: URIs the same way", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    const uri = `agenthost-terminal://e2e/${crypto.randomUUID()}`;
    await client.call("createTerminal", { channel: uri, claim: { kind: "client", clientId: "x" } });
    client.dispatch(uri, { type: "terminal/input", data: "echo vscode-$((1+2))\r" });
    await subscribed(client, uri);
    await client.waitForOutput(uri, /vscode-3/);
    client.close();
  });

  it("refuses a URI in use (-32003), malformed, reserved, non-terminal or invisible-character URIs, bad claims, cwds and sizes (-32602)", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { versions: ["0.9.0"] });
    const uri = fresh();
    await client.call("createTerminal", { channel: uri });
    expect((await rpcErrorOf(client.call("createTerminal", { channel: uri }))).code).toBe(-32003);
    const invalid = [
      { channel: "not a uri" },
      { channel: "ahp-session:/s1" },
      { channel: "ahp-root://" },
      { channel: "javascript:alert(1)" },
      { channel: "http://evil.example/t" },
      { channel: "ahp-terminal:/ad\u200bmin" },
      { channel: "ahp-terminal:/\ufeffadmin" },
      { channel: fresh(), claim: { kind: "agent" } },
      { channel: fresh(), claim: { kind: "session", session: "ahp-session:/s" } },
      { channel: fresh(), cwd: "relative/dir" },
      { channel: fresh(), cwd: "https://example.com/dir" },
      { channel: fresh(), cols: 0 },
      { channel: fresh(), rows: 2.5 },
      { channel: fresh(), name: 7 },
    ];
    for (const params of invalid) expect(await rpcErrorOf(client.call("createTerminal", params)), JSON.stringify(params)).toMatchObject({ code: -32602 });
    client.close();
  });

  it("turns a missing directory into a terminal that exits 127 with the reason in its output", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    const uri = fresh();
    await client.call("createTerminal", { channel: uri, cwd: "/no/such/directory" });
    let state = await subscribed(client, uri);
    expect(await eventually(async () => (state = await subscribed(client, uri)).exitCode !== undefined)).toBe(true);
    expect(state.exitCode).toBe(127);
    expect(contentText(state)).toContain("cannot start in /no/such/directory");
    client.close();
  });
});

describe("terminal channels", () => {
  it("send input as UTF-8 bytes and resize the child", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    const uri = fresh();
    await client.call("createTerminal", { channel: uri });
    await subscribed(client, uri);
    client.dispatch(uri, { type: "terminal/input", data: "read line; printf %s \"$line\" | od -An -tx1\r" });
    client.dispatch(uri, { type: "terminal/input", data: "café\r" });
    await client.waitForOutput(uri, /63 61 66 c3 a9/);
    client.dispatch(uri, { type: "terminal/resized", cols: 101, rows: 31 });
    client.dispatch(uri, { type: "terminal/input", data: "stty size\r" });
    await client.waitForOutput(uri, /31 101\r\n/);
    expect((await subscribed(client, uri))).toMatchObject({ cols: 101, rows: 31 });
    client.close();
  });

  it("decode output split inside a UTF-8 character without replacement characters", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    const uri = fresh();
    await client.call("createTerminal", { channel: uri });
    await subscribed(client, uri);
    client.dispatch(uri, { type: "terminal/input", data: "printf '\\342\\202'; sleep 0.3; printf '\\254 split\\n'\r" });
    const output = await client.waitForOutput(uri, /€ split/);
    expect(output).not.toContain("\ufffd");
    client.close();
  });

  it("keep a 40,000-character line whole in the snapshot, and trim scrollback from the front past the cap", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    const uri = fresh();
    await client.call("createTerminal", { channel: uri });
    await subscribed(client, uri);
    client.dispatch(uri, { type: "terminal/input", data: "head -c 40000 /dev/zero | tr '\\0' x; echo; echo end-$((1+1))\r" });
    await client.waitForOutput(uri, /end-2\r\n/);
    expect(contentText(await subscribed(client, uri))).toContain("x".repeat(40_000));
    client.dispatch(uri, { type: "terminal/input", data: "seq 1 20000; echo end-$((2+2))\r" });
    await client.waitForOutput(uri, /end-4\r\n/);
    const text = contentText(await subscribed(client, uri));
    expect(text.length).toBeLessThanOrEqual(50_000);
    expect(text).toMatch(/19999\r\n20000\r\nend-4\r\n/);
    expect(text).not.toContain("x".repeat(100));
    client.close();
  });

  it("stay isolated from each other", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    const [a, b] = [fresh(), fresh()];
    for (const uri of [a, b]) {
      await client.call("createTerminal", { channel: uri });
      await subscribed(client, uri);
    }
    client.dispatch(a, { type: "terminal/input", data: "echo only-$((10+1))\r" });
    client.dispatch(b, { type: "terminal/input", data: "echo only-$((20+2))\r" });
    await client.waitForOutput(a, /only-11\r\n/);
    await client.waitForOutput(b, /only-22\r\n/);
    expect(client.outputOf(a)).not.toContain("only-22");
    expect(client.outputOf(b)).not.toContain("only-11");
    client.close();
  });

  it("keep output produced while a client was unsubscribed, for its next snapshot", async () => {
    const client = await AhpTestClient.initialized(gateway.url);
    const uri = fresh();
    await client.call("createTerminal", { channel: uri });
    await subscribed(client, uri);
    client.notify("unsubscribe", { channel: uri });
    await client.call("listSessions", {});
    client.dispatch(uri, { type: "terminal/input", data: "echo while-away-$((3*3))\r" });
    const runnerId = gateway.runner.registry.list({ "ahp.uri": uri })[0]!.id;
    const reachedRunner = () => gateway.runner.registry.get(runnerId).log.read(gateway.runner.registry.get(runnerId).log.cursorAt(0), 1 << 20).events.some((e) => e.event.kind === "output" && outputBytes(e.event).toString().includes("while-away-9"));
    expect(await eventually(reachedRunner)).toBe(true);
    await client.call("listSessions", {});
    expect(client.outputOf(uri)).not.toContain("while-away-9");
    expect(await eventually(async () => contentText(await subscribed(client, uri)).includes("while-away-9"))).toBe(true);
    client.close();
  });

  it("echo accepted actions with their origin to every subscriber and the sender, and refuse others to the sender alone", async () => {
    const owner = await AhpTestClient.initialized(gateway.url, { clientId: "owner", subscribe: ["ahp-root://"] });
    const watcher = await AhpTestClient.initialized(gateway.url, { clientId: "watcher", subscribe: ["ahp-root://"] });
    const uri = fresh();
    await owner.call("createTerminal", { channel: uri });
    await subscribed(watcher, uri);
    const renameSeq = owner.dispatch(uri, { type: "terminal/titleChanged", title: "renamed" });
    const echoed = await watcher.waitForEnvelope((e) => e.action.type === "terminal/titleChanged");
    expect(echoed.origin).toEqual({ clientId: "owner", clientSeq: renameSeq });
    await owner.waitForEnvelope((e) => e.action.type === "terminal/titleChanged" && e.origin?.clientSeq === renameSeq);
    await watcher.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes('"renamed"'));

    const stealSeq = watcher.dispatch(uri, { type: "terminal/claimed", claim: { kind: "client", clientId: "watcher" } });
    const refused = await watcher.waitForEnvelope((e) => e.origin?.clientSeq === stealSeq && e.rejectionReason !== undefined);
    expect(refused.rejectionReason).toMatch(/held by client owner/);
    const forgedSeq = watcher.dispatch(uri, { type: "terminal/data", data: "forged" });
    expect((await watcher.waitForEnvelope((e) => e.origin?.clientSeq === forgedSeq)).rejectionReason).toMatch(/not an action clients may dispatch/);
    const misroutedSeq = watcher.dispatch("ahp-root://", { type: "terminal/input", data: "ls\r" });
    expect((await watcher.waitForEnvelope((e) => e.origin?.clientSeq === misroutedSeq)).rejectionReason).toMatch(/cannot be dispatched to the root channel/);
    const rootForgerySeq = watcher.dispatch("ahp-root://", { type: "root/terminalsChanged", terminals: [] });
    expect((await watcher.waitForEnvelope((e) => e.origin?.clientSeq === rootForgerySeq)).rejectionReason).toMatch(/not an action clients may dispatch/);
    const badSeq = watcher.dispatch(uri, { type: "terminal/resized", cols: -1, rows: 10 });
    expect((await watcher.waitForEnvelope((e) => e.origin?.clientSeq === badSeq)).rejectionReason).toMatch(/cols and rows/);
    await owner.call("ping");
    expect(owner.envelopes().some((e) => e.rejectionReason !== undefined)).toBe(false);
    expect((await subscribed(watcher, uri)).claim).toEqual({ kind: "client", clientId: "owner" });

    const transferSeq = owner.dispatch(uri, { type: "terminal/claimed", claim: { kind: "session", session: "ahp-session:/agent", turnId: "t1", toolCallId: "tc1" } });
    await owner.waitForEnvelope((e) => e.origin?.clientSeq === transferSeq && !e.rejectionReason);
    await watcher.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes("ahp-session:/agent"));
    const narrowSeq = watcher.dispatch(uri, { type: "terminal/claimed", claim: { kind: "session", session: "ahp-session:/agent" } });
    expect((await watcher.waitForEnvelope((e) => e.origin?.clientSeq === narrowSeq)).rejectionReason).toBeUndefined();
    expect((await subscribed(owner, uri)).claim).toEqual({ kind: "session", session: "ahp-session:/agent" });
    owner.close();
    watcher.close();
  });

  it("clear their content, in the runner too, and keep size, title and claim", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { clientId: "clearer" });
    const uri = fresh();
    await client.call("createTerminal", { channel: uri, name: "keep-me", cols: 90, rows: 20 });
    await subscribed(client, uri);
    client.dispatch(uri, { type: "terminal/input", data: "echo before-clear\r" });
    // Clear once the shell is idle again (its prompt printed), so nothing of it lands after the clear.
    await client.waitForOutput(uri, /before-clear\r\n\$ $/);
    client.dispatch(uri, { type: "terminal/cleared" });
    await client.waitForEnvelope((e) => e.action.type === "terminal/cleared");
    const state = await subscribed(client, uri);
    expect(state).toMatchObject({ content: [], cols: 90, rows: 20, title: "keep-me", claim: { kind: "client", clientId: "clearer" } });
    const runnerId = [...gateway.runner.registry.list({ "ahp.uri": uri })][0]!.id;
    // The runner drops its retained output too: nothing is left between its start and end offsets.
    const retained = (): { startOffset: unknown; endOffset: unknown } => gateway.runner.registry.get(runnerId).snapshot();
    expect(await eventually(() => retained().startOffset === retained().endOffset)).toBe(true);
    client.close();
  });

  it("report exit once, with 128 and the signal's name for a signal death, and refuse input and resize afterwards", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    const uri = fresh();
    await client.call("createTerminal", { channel: uri });
    await subscribed(client, uri);
    client.dispatch(uri, { type: "terminal/input", data: "kill -9 $$\r" });
    const exited = await client.waitForEnvelope((e) => e.channel === uri && e.action.type === "terminal/exited");
    expect(exited.action).toEqual({ type: "terminal/exited", exitCode: 128, signal: "SIGKILL" });
    await client.waitForEnvelope((e) => e.action.type === "root/terminalsChanged" && JSON.stringify(e.action).includes('"exitCode":128'));
    const inputSeq = client.dispatch(uri, { type: "terminal/input", data: "x" });
    expect((await client.waitForEnvelope((e) => e.origin?.clientSeq === inputSeq)).rejectionReason).toMatch(/exited/);
    const resizeSeq = client.dispatch(uri, { type: "terminal/resized", cols: 10, rows: 10 });
    expect((await client.waitForEnvelope((e) => e.origin?.clientSeq === resizeSeq)).rejectionReason).toMatch(/exited/);
    expect(client.envelopes().filter((e) => e.channel === uri && e.action.type === "terminal/exited")).toHaveLength(1);
    client.close();
  });

  it("shape state per version: flat exitCode before 0.7, isPty from 0.7, lifecycle and chat from 0.9", async () => {
    const creator = await AhpTestClient.initialized(gateway.url, { versions: ["0.9.0"] });
    const uri = fresh();
    await creator.call("createTerminal", { channel: uri, claim: { kind: "session", session: "ahp-session:/s", chat: "ahp-chat:/c" } });
    const old = await AhpTestClient.initialized(gateway.url, { versions: ["0.5.1"] });
    const mid = await AhpTestClient.initialized(gateway.url, { versions: ["0.7.0"] });
    expect(await subscribed(old, uri)).not.toHaveProperty("isPty");
    expect((await subscribed(old, uri)).claim).toEqual({ kind: "session", session: "ahp-session:/s" });
    expect(await subscribed(mid, uri)).toMatchObject({ isPty: true });
    expect(await subscribed(mid, uri)).not.toHaveProperty("lifecycle");
    expect(await subscribed(creator, uri)).toMatchObject({ isPty: true, lifecycle: { status: "running" }, claim: { chat: "ahp-chat:/c" } });
    creator.dispatch(uri, { type: "terminal/input", data: "exit 4\r" });
    await creator.waitForEnvelope((e) => e.action.type === "terminal/exited");
    expect(await subscribed(creator, uri)).toMatchObject({ exitCode: 4, lifecycle: { status: "exited", exitCode: 4 } });
    expect(await subscribed(old, uri)).toMatchObject({ exitCode: 4 });
    expect(await subscribed(old, uri)).not.toHaveProperty("lifecycle");
    for (const client of [creator, old, mid]) client.close();
  });
});

describe("disposeTerminal", () => {
  it("ends the process, removes the terminal from the root list and stops its channel; an unknown URI is -32008", async () => {
    const client = await AhpTestClient.initialized(gateway.url, { subscribe: ["ahp-root://"] });
    const uri = fresh();
    await client.call("createTerminal", { channel: uri });
    await subscribed(client, uri);
    const runnerId = [...gateway.runner.registry.list({ "ahp.uri": uri })][0]!.id;
    expect(await client.call("disposeTerminal", { channel: uri })).toBeNull();
    const root = (await client.call("subscribe", { channel: "ahp-root://" })).snapshot.state;
    expect(root.terminals.map((info: { resource: string }) => info.resource)).not.toContain(uri);
    expect(() => gateway.runner.registry.get(runnerId)).toThrow(/no terminal/);
    expect(await rpcErrorOf(client.call("subscribe", { channel: uri }))).toMatchObject({ code: -32008, message: `No terminal at ${uri}` });
    expect(await rpcErrorOf(client.call("disposeTerminal", { channel: uri }))).toMatchObject({ code: -32008, message: `No terminal at ${uri}` });
    const refusedSeq = client.dispatch(uri, { type: "terminal/input", data: "x" });
    expect((await client.waitForEnvelope((e) => e.origin?.clientSeq === refusedSeq)).rejectionReason).toBe(`No terminal at ${uri}`);
    client.close();
  });
});
