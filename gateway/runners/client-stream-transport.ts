import http2, { type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import { fromBinary, type DescMessage, type DescMethodStreaming, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type Interceptor, type StreamRequest, type StreamResponse, type Transport } from "@connectrpc/connect";
import { createAsyncIterable, createMethodUrl, runStreamingCall } from "@connectrpc/connect/protocol";
import { requestHeader, validateResponse, validateTrailer } from "@connectrpc/connect/protocol-grpc";
import type { Http2SessionManager } from "@connectrpc/connect-node";
import { GRPC_FRAME_HEADER_BYTES } from "./write-stream-frame.js";

/** Writes one request message of a method as a whole gRPC frame (header and message); the table it is in says which method's. */
export type FrameWriter = (message: never) => Uint8Array;

/** Where the calls go and what every call passes through, as for connect's own gRPC transport. */
export interface ClientStreamOptions {
  baseUrl: string;
  sessionManager: Http2SessionManager;
  interceptors: Interceptor[];
  /** The client-streaming methods carried here, each with its frame writer; every other call goes to the inner transport. */
  frameWriters: ReadonlyMap<DescMethodStreaming, FrameWriter>;
}

/** Largest answer a client stream accepts: its one response message (WriteStream's is a count), with room to spare. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
/** The header or trailer that carries a call's gRPC status. */
const GRPC_STATUS = "grpc-status";
/** The flag of a compressed message: the gateway asks for no compression, so an answer carrying one is a protocol error. */
const COMPRESSED_FLAG = 0b1;

/**
 * Carries the given client-streaming methods over gRPC on the runner's HTTP/2 connection itself,
 * and hands every other call to `inner` (connect's gRPC transport on the same connection). Connect
 * passes each message of a stream through several async stages (serialise, compress, join, then a
 * write it waits on), each a promise turn or more; for a keystroke those turns were much of what
 * WriteStream cost. Here a message is written as its frame writer made it, in the turn it is taken.
 * Everything around the messages stays connect's: the interceptors (token, tracing), deadlines,
 * cancelling, request headers and the reading of the answer's status.
 */
export function withClientStreams(inner: Transport, options: ClientStreamOptions): Transport {
  const { baseUrl, sessionManager, interceptors, frameWriters } = options;
  return {
    unary: (method, signal, timeoutMs, header, message, contextValues) => inner.unary(method, signal, timeoutMs, header, message, contextValues),
    stream(method, signal, timeoutMs, header, input, contextValues) {
      const writeFrame = method.methodKind === "client_streaming" ? frameWriters.get(method) : undefined;
      if (!writeFrame) return inner.stream(method, signal, timeoutMs, header, input, contextValues);
      // As connect's transports read it: none, or zero and below, is no deadline.
      const deadlineMs = timeoutMs === undefined || timeoutMs <= 0 ? undefined : timeoutMs;
      return runStreamingCall({
        interceptors,
        signal,
        timeoutMs: deadlineMs,
        req: {
          stream: true,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: createMethodUrl(baseUrl, method),
          header: requestHeader(true, deadlineMs, header),
          contextValues: contextValues ?? createContextValues(),
          message: input,
        },
        next: (request) => clientStreamCall(request, sessionManager, writeFrame),
      });
    },
  };
}

async function clientStreamCall<I extends DescMessage, O extends DescMessage>(
  request: StreamRequest<I, O>,
  sessionManager: Http2SessionManager,
  writeFrame: FrameWriter,
): Promise<StreamResponse<I, O>> {
  const { signal } = request;
  if (signal.aborted) throw ConnectError.from(signal.reason, Code.Canceled);
  const url = new URL(request.url);
  const stream = await sessionManager.request("POST", url.pathname + url.search, nodeHeaders(request.header), {});
  return new Promise<StreamResponse<I, O>>((resolve, reject) => {
    let header: Headers | undefined;
    const trailer = new Headers();
    const body: Buffer[] = [];
    let bodyBytes = 0;
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      return true;
    };
    const fail = (reason: unknown): void => {
      if (!settle()) return;
      const error = ConnectError.from(reason, Code.Unavailable);
      if (!stream.closed) stream.close(error.code === Code.Canceled ? http2.constants.NGHTTP2_CANCEL : http2.constants.NGHTTP2_INTERNAL_ERROR);
      reject(error);
    };
    const onAbort = (): void => fail(ConnectError.from(signal.reason, Code.Canceled));
    signal.addEventListener("abort", onAbort);
    stream.on("response", (headers) => {
      header = webHeaders(headers);
      const { headerError } = validateResponse(Number(headers[":status"] ?? 0), header);
      if (headerError) fail(headerError);
    });
    stream.on("data", (chunk: Buffer) => {
      sessionManager.notifyResponseByteRead(stream);
      bodyBytes += chunk.length;
      if (bodyBytes > MAX_RESPONSE_BYTES) fail(new ConnectError(`the runner's answer is larger than ${MAX_RESPONSE_BYTES} bytes`, Code.ResourceExhausted));
      else body.push(chunk);
    });
    stream.on("trailers", (trailers) => webHeaders(trailers).forEach((value, key) => trailer.set(key, value)));
    // A write after the runner answered and ended the stream early is not the call's error: its answer is.
    stream.on("error", (err: NodeJS.ErrnoException) => err.code === "ERR_STREAM_WRITE_AFTER_END" || fail(err));
    stream.on("close", () => {
      if (settled) return;
      // No status at all: the stream was reset, or the connection went, before the runner answered.
      if (header === undefined || !(trailer.has(GRPC_STATUS) || header.has(GRPC_STATUS))) return fail(streamResetError(stream));
      try {
        validateTrailer(trailer, header);
        const messages = parseFrames(Buffer.concat(body), request.method.output);
        if (settle()) resolve({ ...request, header, trailer, message: createAsyncIterable(messages) });
      } catch (err) {
        fail(err);
      }
    });
    writeMessages(request.message, stream, writeFrame, () => settled).catch(fail);
  });
}

/** Writes each message as it comes, waiting only when the stream's buffer is full; ends the stream after the last. */
async function writeMessages(messages: AsyncIterable<unknown>, stream: ClientHttp2Stream, writeFrame: FrameWriter, settled: () => boolean): Promise<void> {
  for await (const message of messages) {
    if (settled() || stream.writableEnded) return;
    if (!stream.write(writeFrame(message as never))) await writable(stream);
  }
  if (!settled() && !stream.writableEnded) stream.end();
}

/** Resolves once `stream` can take more, or is gone. */
function writable(stream: ClientHttp2Stream): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off("drain", done).off("close", done);
      resolve();
    };
    stream.on("drain", done).on("close", done);
  });
}

/** The messages of a whole gRPC body. */
function parseFrames<O extends DescMessage>(body: Buffer, schema: O): MessageShape<O>[] {
  const messages: MessageShape<O>[] = [];
  for (let at = 0; at < body.length; ) {
    if (body.length - at < GRPC_FRAME_HEADER_BYTES) throw new ConnectError("protocol error: the runner's answer ends inside a message header", Code.Internal);
    if (body.readUInt8(at) & COMPRESSED_FLAG) throw new ConnectError("protocol error: the runner compressed its answer, which was not asked for", Code.Internal);
    const length = body.readUInt32BE(at + 1);
    const start = at + GRPC_FRAME_HEADER_BYTES;
    if (body.length - start < length) throw new ConnectError("protocol error: the runner's answer ends inside a message", Code.Internal);
    messages.push(fromBinary(schema, body.subarray(start, start + length)));
    at = start + length;
  }
  return messages;
}

/**
 * What a stream closed without an answer means, by its HTTP/2 reset code, as gRPC maps them
 * (PROTOCOL-HTTP2.md): a refused stream may be retried, a cancel is a cancel, ENHANCE_YOUR_CALM is
 * the runner's limits, INADEQUATE_SECURITY a TLS setting; anything else is the transport's fault.
 */
const RESET_CODES: ReadonlyMap<number, Code> = new Map([
  [http2.constants.NGHTTP2_REFUSED_STREAM, Code.Unavailable],
  [http2.constants.NGHTTP2_CANCEL, Code.Canceled],
  [http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, Code.ResourceExhausted],
  [http2.constants.NGHTTP2_INADEQUATE_SECURITY, Code.PermissionDenied],
]);

function streamResetError(stream: ClientHttp2Stream): ConnectError {
  const { rstCode } = stream;
  if (rstCode === undefined || rstCode === http2.constants.NGHTTP2_NO_ERROR) return new ConnectError("the runner closed the stream without answering", Code.Unavailable);
  return new ConnectError(`the runner reset the stream (HTTP/2 code ${rstCode})`, RESET_CODES.get(rstCode) ?? Code.Internal);
}

function nodeHeaders(header: Headers): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  header.forEach((value, key) => (headers[key] = value));
  return headers;
}

function webHeaders(headers: IncomingHttpHeaders): Headers {
  const web = new Headers();
  for (const [key, value] of Object.entries(headers)) {
    if (key.startsWith(":") || value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) web.append(key, one);
  }
  return web;
}
