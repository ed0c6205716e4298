import http2 from "node:http2";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { useTestRunner, type TestRunner } from "./harness.js";

/** Short, so a test sees an idle connection closed soon. */
const IDLE_TIMEOUT_MS = 300;
/** Lets time pass. Only for proving a non-event (a connection the runner does not close): there is nothing to wait for. */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// Heartbeats far apart: an Attach stream stays silent for the whole test.
const runner = useTestRunner({ idleTimeoutMs: IDLE_TIMEOUT_MS, heartbeatMs: 60_000 });

/** A connect-node session manager that remembers every HTTP/2 session it opened and the GOAWAYs they got. */
class RecordingSessionManager extends Http2SessionManager {
  readonly sessions = new Set<http2.ClientHttp2Session>();
  readonly goaways: number[] = [];

  override async request(...args: Parameters<Http2SessionManager["request"]>): ReturnType<Http2SessionManager["request"]> {
    const stream = await super.request(...args);
    const session = stream.session as http2.ClientHttp2Session;
    if (!this.sessions.has(session)) {
      this.sessions.add(session);
      session.on("goaway", (code) => this.goaways.push(code));
    }
    return stream;
  }
}

function recordingClient(pings?: ConstructorParameters<typeof Http2SessionManager>[1]): { client: ReturnType<TestRunner["clientFor"]>; manager: RecordingSessionManager } {
  const manager = new RecordingSessionManager(runner.server.url, pings);
  return { manager, client: runner.clientFor((baseUrl, interceptors) => createGrpcTransport({ baseUrl, interceptors, sessionManager: manager })) };
}

/** A raw HTTP/2 session to the runner; `goaway` and `closed` settle when the runner sends GOAWAY and when the connection ends. */
function rawSession(): { client: http2.ClientHttp2Session; goaway: Promise<number>; closed: Promise<void>; pingEvery(ms: number): () => void } {
  const client = http2.connect(runner.server.url);
  client.on("error", () => undefined);
  const goaway = new Promise<number>((resolve) => client.once("goaway", (code) => resolve(code)));
  const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
  const pingEvery = (ms: number): (() => void) => {
    const timer = setInterval(() => client.closed || client.destroyed || client.ping(() => undefined), ms);
    return () => clearInterval(timer);
  };
  return { client, goaway, closed, pingEvery };
}

/** Calls List on a raw session, with the runner's token or without; resolves with the HTTP status. */
function list(client: http2.ClientHttp2Session, withToken: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { ":method": "POST", ":path": "/terminal.v1.TerminalService/List", "content-type": "application/json", ...(withToken ? { authorization: `Bearer ${runner.token}` } : {}) };
    const stream = client.request(headers);
    let status = 0;
    stream.on("response", (h) => (status = Number(h[":status"])));
    stream.on("error", reject);
    stream.resume();
    stream.on("end", () => resolve(status));
    stream.end("{}");
  });
}

const settled = (promise: Promise<unknown>, ms: number): Promise<boolean> => Promise.race([promise.then(() => true), sleep(ms).then(() => false)]);

describe("an HTTP/2 connection without calls", () => {
  it("gets GOAWAY (NO_ERROR) after the idle timeout, and is closed", async () => {
    const { client, goaway, closed } = rawSession();
    try {
      expect(await list(client, true)).toBe(200);
      expect(await goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
      expect(await settled(closed, 5_000)).toBe(true);
    } finally {
      client.destroy();
    }
  });

  it("is closed however often it pings, when it never called with the token", async () => {
    const { client, goaway, closed, pingEvery } = rawSession();
    const stopPinging = pingEvery(50);
    try {
      expect(await list(client, false)).toBe(401);
      expect(await goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
      expect(await settled(closed, 5_000)).toBe(true);
    } finally {
      stopPinging();
      client.destroy();
    }
  });

  it("stays open while it pings, once it has called with the token (as a gateway's does)", async () => {
    const { client, goaway, pingEvery } = rawSession();
    const stopPinging = pingEvery(50);
    try {
      expect(await list(client, true)).toBe(200);
      expect(await settled(goaway, IDLE_TIMEOUT_MS * 4)).toBe(false);
      expect(await list(client, true)).toBe(200);
    } finally {
      stopPinging();
      client.destroy();
    }
  });

  it("stays open while an Attach stream is open, however quiet, and the stream delivers", async () => {
    const { client, manager } = recordingClient();
    const { terminal } = await client.spawn({ argv: ["cat"] });
    let seen = "";
    const reading = (async () => {
      for await (const event of client.attach({ id: terminal!.id, follow: true })) {
        if (event.event.case === "output") seen += Buffer.from(event.event.value.data).toString();
      }
    })();
    await sleep(IDLE_TIMEOUT_MS * 4);
    await client.write({ id: terminal!.id, data: Buffer.from("after a quiet while\r") });
    await expect.poll(() => seen, { timeout: 5_000 }).toMatch(/after a quiet while/);
    expect({ sessions: manager.sessions.size, goaways: manager.goaways }).toEqual({ sessions: 1, goaways: [] });
    await client.close({ id: terminal!.id });
    await reading;
  });
});

describe("a client set up as the gateway's is (one connection, PINGs while idle)", () => {
  it("keeps its one connection between calls far apart", async () => {
    // The gateway pings every 10 s against a default idle timeout of 5 minutes: here both are scaled down.
    const { client, manager } = recordingClient({ pingIntervalMs: IDLE_TIMEOUT_MS / 3, pingIdleConnection: true });
    for (let call = 0; call < 3; call++) {
      await expect(client.list({})).resolves.toBeDefined();
      await sleep(IDLE_TIMEOUT_MS * 2);
    }
    expect({ sessions: manager.sessions.size, goaways: manager.goaways }).toEqual({ sessions: 1, goaways: [] });
  });
});
