import http2 from "node:http2";
import { describe, expect, it } from "vitest";
import { useTestRunner } from "./harness.js";

const runner = useTestRunner();

/** Bytes that are no protobuf message: a field tag with wire type 7, which does not exist. */
const GARBAGE = Buffer.from([0x0f, 0xff, 0xff, 0xff, 0xff]);
const envelope = (payload: Buffer): Buffer => Buffer.concat([Buffer.from([0, 0, 0, 0, payload.length]), payload]);

/** One raw HTTP/2 request: the status, headers, trailers and body that came back. */
function post(path: string, contentType: string, body: Buffer): Promise<{ status: number; headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(runner.server.url);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": contentType, te: "trailers", authorization: `Bearer ${runner.token}` });
    let headers: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (t) => (trailers = t));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      session.close();
      resolve({ status: Number(headers[":status"]), headers, trailers, body: Buffer.concat(chunks).toString("latin1") });
    });
    stream.end(body);
  });
}

/** A gRPC reply's status and message, from its trailers (or its headers, for an answer without a body). */
const grpcStatus = (reply: Awaited<ReturnType<typeof post>>) => ({
  status: reply.trailers["grpc-status"] ?? reply.headers["grpc-status"],
  message: decodeURIComponent(String(reply.trailers["grpc-message"] ?? reply.headers["grpc-message"])),
});

describe("a malformed request body", () => {
  it("is INVALID_ARGUMENT with a message naming only the expected message, over gRPC, gRPC-Web and Connect, binary and JSON", async () => {
    const spawn = "/terminal.v1.TerminalService/Spawn";
    const grpc = await post(spawn, "application/grpc", envelope(GARBAGE));
    expect(grpcStatus(grpc)).toEqual({
      status: "3",
      message: "the request body is not a valid terminal.v1.SpawnRequest",
    });
    const web = await post(spawn, "application/grpc-web+proto", envelope(GARBAGE));
    expect(web.body).toMatch(/grpc-status: ?3\r\n/);
    expect(web.body).toMatch(/grpc-message: ?the%20request%20body%20is%20not%20a%20valid%20terminal\.v1\.SpawnRequest\r\n/);
    for (const [contentType, body] of [
      ["application/proto", GARBAGE],
      ["application/json", Buffer.from('{"id": ')],
      ["application/json", Buffer.from('{"cols": "wide"}')],
    ] as const) {
      const connect = await post(spawn, contentType, body);
      expect(connect.status, contentType).toBe(400);
      expect(JSON.parse(connect.body)).toEqual({ code: "invalid_argument", message: "the request body is not a valid terminal.v1.SpawnRequest" });
    }
    const stream = await post("/terminal.v1.TerminalService/WriteStream", "application/grpc", Buffer.concat([envelope(Buffer.from([0x0a, 0x01, 0x61])), envelope(GARBAGE)]));
    expect(stream.trailers["grpc-status"]).toBe("3");
    expect(runner.registry.size).toBe(0);
  });

  it("on the streams whose messages the runner reads one by one (WriteStream, Follow) is refused in the same words, over gRPC and gRPC-Web alike", async () => {
    for (const method of ["WriteStream", "Follow"]) {
      const expected = { status: "3", message: `the request body is not a valid terminal.v1.${method}Request` };
      // A well-formed message, then one that is not: neither reaches the implementation.
      const body = Buffer.concat([envelope(Buffer.from([0x0a, 0x01, 0x61])), envelope(GARBAGE)]);
      expect(grpcStatus(await post(`/terminal.v1.TerminalService/${method}`, "application/grpc", body)), method).toEqual(expected);
      const web = await post(`/terminal.v1.TerminalService/${method}`, "application/grpc-web+proto", envelope(GARBAGE));
      expect(web.body, method).toMatch(/grpc-status: ?3\r\n/);
      expect(web.body, method).toContain(encodeURIComponent(expected.message));
    }
    expect(runner.registry.size).toBe(0);
  });

  it("leaves well-formed requests alone", async () => {
    const listed = await post("/terminal.v1.TerminalService/List", "application/json", Buffer.from("{}"));
    expect([listed.status, JSON.parse(listed.body)]).toEqual([200, {}]);
  });
});
