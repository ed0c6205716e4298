import http2, { type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import type { DescMessage, DescMethodStreaming, MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type Interceptor, type StreamRequest, type StreamResponse, type Transport } from "@connectrpc/connect";
import { createMethodUrl, runStreamingCall } from "@connectrpc/connect/protocol";
import { requestHeader, validateResponse, validateTrailer } from "@connectrpc/connect/protocol-grpc";
import { FrameReader, type FrameWriter, type MessageParser } from "../../lib/grpc-frames.js";
import { MessageQueue } from "./message-queue.js";

/** What the streams need of the runner's connection: connect-node's session manager, which the inner transport shares. */
export interface StreamOpener {
  /** Opens a stream on the connection, connecting first when it has none. */
  request(method: string, path: string, headers: OutgoingHttpHeaders, options: object): Promise<ClientHttp2Stream>;
  /** Tells the connection's idle check that a response's bytes were read. */
  notifyResponseByteRead(stream: ClientHttp2Stream): void;
}

/** Where the calls go and what every call passes through, as for connect's own gRPC transport. */
export interface DirectStreamOptions {
  baseUrl: string;
  sessionManager: StreamOpener;
  interceptors: Interceptor[];
  /** The streaming methods carried here, each with the frame writer of its requests; every other call goes to the inner transport. */
  frameWriters: ReadonlyMap<DescMethodStreaming, FrameWriter<never>>;
  /** Parsers of the answers of some of those methods, in place of protobuf's. */
  answerParsers?: ReadonlyMap<DescMethodStreaming, MessageParser<unknown>>;
}

/**
 * Largest response message read: the runner's own limit on what it sends (a List of every terminal;
 * a Follow batch is at most 512 KiB and one event). Connect's transport reads up to 4 GiB.
 */
const MAX_RESPONSE_MESSAGE_BYTES = 16 * 1024 * 1024;
/** The header or trailer that carries a call's gRPC status. */
const GRPC_STATUS = "grpc-status";

/**
 * Carries the given streaming methods over gRPC on the runner's HTTP/2 connection itself, and hands
 * every other call to `inner` (connect's gRPC transport on the same connection). Connect passes each
 * message through several async stages each way (serialise, compress, join and a write it waits on;
 * then read, split, decompress and parse), each a promise turn or more: for a keystroke and its echo
 * those turns were much of what the gateway spent. Here a request goes out as its frame writer made
 * it, in the turn it is taken, and a response is parsed in the turn its bytes arrive. Everything
 * around the messages stays connect's: interceptors (token, tracing), deadlines, cancelling, the
 * request headers and the reading of the answer's status.
 */
export function withDirectStreams(inner: Transport, options: DirectStreamOptions): Transport {
  const { baseUrl, sessionManager, interceptors, frameWriters, answerParsers } = options;
  return {
    unary: (method, signal, timeoutMs, header, message, contextValues) => inner.unary(method, signal, timeoutMs, header, message, contextValues),
    stream(method, signal, timeoutMs, header, input, contextValues) {
      const writeFrame = frameWriters.get(method);
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
        next: (request) => directCall(request, sessionManager, writeFrame, answerParsers?.get(method)),
      });
    },
  };
}

/** One call on its own HTTP/2 stream: resolves with the answer's headers, then streams its messages and reads its status at the end. */
async function directCall<I extends DescMessage, O extends DescMessage>(
  request: StreamRequest<I, O>,
  sessionManager: StreamOpener,
  writeFrame: FrameWriter<never>,
  parseAnswer?: MessageParser<unknown>,
): Promise<StreamResponse<I, O>> {
  const { signal } = request;
  if (signal.aborted) throw ConnectError.from(signal.reason, Code.Canceled);
  const url = new URL(request.url);
  const stream = await sessionManager.request("POST", url.pathname + url.search, nodeHeaders(request.header), {});
  const messages = new MessageQueue<MessageShape<O>>(stream);
  const frames = new FrameReader(request.method.output, MAX_RESPONSE_MESSAGE_BYTES, parseAnswer as MessageParser<MessageShape<O>> | undefined);
  const trailer = new Headers();
  return new Promise<StreamResponse<I, O>>((resolve, reject) => {
    let header: Headers | undefined;
    let ended = false;
    const end = (error?: ConnectError): void => {
      if (ended) return;
      ended = true;
      signal.removeEventListener("abort", onAbort);
      if (error && !stream.closed) stream.close(error.code === Code.Canceled ? http2.constants.NGHTTP2_CANCEL : http2.constants.NGHTTP2_INTERNAL_ERROR);
      // Before the answer's headers the call itself fails; after them, its messages do, as connect's do.
      if (error && header === undefined) reject(error);
      else messages.end(error);
    };
    const fail = (reason: unknown): void => end(ConnectError.from(reason, Code.Unavailable));
    const onAbort = (): void => end(ConnectError.from(signal.reason, Code.Canceled));
    signal.addEventListener("abort", onAbort);
    // Aborted while the stream was being opened: the listener came too late to hear it.
    if (signal.aborted) onAbort();
    stream.on("response", (headers) => {
      header = webHeaders(headers);
      const { headerError } = validateResponse(Number(headers[":status"] ?? 0), header);
      if (headerError) {
        header = undefined;
        return fail(headerError);
      }
      resolve({ ...request, header, trailer, message: messages });
    });
    stream.on("data", (chunk: Buffer) => {
      sessionManager.notifyResponseByteRead(stream);
      if (ended) return;
      try {
        frames.read(chunk, (message) => messages.push(message));
      } catch (err) {
        fail(err);
      }
    });
    stream.on("trailers", (trailers) => webHeaders(trailers).forEach((value, key) => trailer.set(key, value)));
    // A write after the runner answered and ended the stream early is not the call's error: its answer is.
    stream.on("error", (err: NodeJS.ErrnoException) => err.code === "ERR_STREAM_WRITE_AFTER_END" || fail(err));
    stream.on("close", () => {
      if (ended) return;
      // No status at all: the stream was reset, or the connection went, before the runner answered.
      if (header === undefined || !(trailer.has(GRPC_STATUS) || header.has(GRPC_STATUS))) return fail(streamResetError(stream));
      try {
        validateTrailer(trailer, header);
        frames.finish();
        end();
      } catch (err) {
        fail(err);
      }
    });
    writeRequests(request.message, stream, writeFrame, () => ended).catch(fail);
  });
}

/** Writes each request as it comes, waiting only when the stream's buffer is full; ends the stream's sending side after the last. */
async function writeRequests(requests: AsyncIterable<unknown>, stream: ClientHttp2Stream, writeFrame: FrameWriter<never>, ended: () => boolean): Promise<void> {
  for await (const request of requests) {
    if (ended() || stream.writableEnded) return;
    if (!stream.write(writeFrame(request as never))) await writable(stream);
  }
  if (!ended() && !stream.writableEnded) stream.end();
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
