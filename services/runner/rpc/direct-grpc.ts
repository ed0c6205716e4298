import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext, type HandlerContext, type Interceptor, type MethodImplSpec } from "@connectrpc/connect";
import {
  assertByteStreamRequest,
  compressionNegotiate,
  transformInvokeImplementation,
  uResponseMethodNotAllowed,
  uResponseOk,
  untilFirst,
  type UniversalHandler,
} from "@connectrpc/connect/protocol";
import { contentTypeProto, grpcStatusOk, headerContentType, headerEncoding, headerAcceptEncoding, headerGrpcStatus, headerTimeout, parseContentType, parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { FrameReader, type FrameWriter } from "../../../lib/grpc-frames.js";
import { gateEnvelopes } from "./message-size-gate.js";
import { invalidBody } from "./request-body-check.js";
import { wrapHandlers, type HandlerFn } from "./wrapped-handlers.js";

/** A method served over binary gRPC with the runner's own frames: its implementation, and how each of its answers becomes a frame. */
export interface DirectMethod {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one list holds methods of different message types
  spec: MethodImplSpec<any, any>;
  writeFrame: FrameWriter<never>;
}

/** What every call of a direct method passes through, as connect's handlers do. */
export interface DirectGrpcOptions {
  interceptors: Interceptor[];
  shutdownSignal: AbortSignal;
  /** Largest request message; the request-body check refuses larger ones before they get here. */
  maxMessageBytes: number;
}

type CallContext = HandlerContext & { abort(reason?: unknown): void };

/** The size gate's check for direct calls: none, since their messages are parsed (and a malformed one refused) where they are read. */
const ACCEPT_WHOLE_MESSAGE = (): void => {};

/**
 * Serves `methods` over binary gRPC (`application/grpc`, `application/grpc+proto`) without connect's
 * per-message stages, and leaves every other protocol of theirs to connect's handler in `handlers`.
 * Connect passes each request through three async stages (split, decompress, parse) and each answer
 * through three more, copying its bytes twice (protobuf's `finish`, then the envelope): for Follow's
 * output that was a sixth of the runner's CPU under a flood. Here a request is split and parsed in
 * one stage, and an answer is written into its frame once. The call around the messages is connect's:
 * its context, deadline (`grpc-timeout`), compression negotiation (none is accepted), interceptors
 * (token, tracing, metrics, refusal log), and the status in the trailers. It wraps the handlers after
 * the request-body check (request-body-check.ts) and takes that check's place: a message is gated for
 * size as there, and refused as there when it does not parse, but parsed once instead of twice.
 */
export function serveDirectly(handlers: UniversalHandler[], methods: readonly DirectMethod[], options: DirectGrpcOptions): void {
  wrapHandlers(handlers, (handler) => {
    const method = methods.find(({ spec }) => spec.method === handler.method);
    if (!method) return undefined;
    const direct = directHandler(method, options);
    return (request) => (parseContentType(request.header.get(headerContentType))?.binary ? direct(request) : handler(request));
  });
}

function directHandler({ spec, writeFrame }: DirectMethod, { interceptors, shutdownSignal, maxMessageBytes }: DirectGrpcOptions): HandlerFn {
  return async (request) => {
    assertByteStreamRequest(request);
    if (request.method !== "POST") return uResponseMethodNotAllowed;
    const timeout = parseTimeout(request.header.get(headerTimeout), Number.MAX_SAFE_INTEGER);
    const context: CallContext = createHandlerContext({
      ...spec,
      service: spec.method.parent,
      requestMethod: request.method,
      protocolName: "grpc",
      timeoutMs: timeout.timeoutMs,
      shutdownSignal,
      requestSignal: request.signal,
      requestHeader: request.header,
      url: request.url,
      responseHeader: { [headerContentType]: contentTypeProto },
      responseTrailer: { [headerGrpcStatus]: grpcStatusOk },
      contextValues: request.contextValues,
    });
    // The runner accepts no compression: a request in any encoding is UNIMPLEMENTED, as connect answers it.
    const compression = compressionNegotiate([], request.header.get(headerEncoding), request.header.get(headerAcceptEncoding), headerAcceptEncoding);
    // The size gate refuses an oversized message as every other call's does; each message is parsed once, here.
    const body = gateEnvelopes(request.body, maxMessageBytes, ACCEPT_WHOLE_MESSAGE);
    const requests = requestMessages(body, spec.method.input, maxMessageBytes, timeout.error ?? compression.error);
    const answers = transformInvokeImplementation(spec, context, interceptors)(requests);
    return { ...uResponseOk, body: await untilFirst(answerFrames(answers, context, writeFrame)), header: context.responseHeader, trailer: context.responseTrailer };
  };
}

/** The request's messages, parsed in the stage that reads its bytes; a refusal (a bad deadline, compression) ends the call first. */
async function* requestMessages<I extends DescMessage>(body: AsyncIterable<Uint8Array>, schema: I, maxBytes: number, refusal: ConnectError | undefined): AsyncGenerator<MessageShape<I>> {
  if (refusal) throw refusal;
  const reader = new FrameReader(schema, maxBytes, (bytes) => {
    try {
      return fromBinary(schema, bytes);
    } catch {
      throw invalidBody(schema);
    }
  });
  const parsed: MessageShape<I>[] = [];
  for await (const chunk of body) {
    reader.read(chunk, (message) => parsed.push(message));
    yield* parsed.splice(0);
  }
  reader.finish();
}

/**
 * Each answer as its frame. When the implementation fails, its error becomes the trailers' status
 * (an error that is not a ConnectError is INTERNAL, its words kept out); when the caller goes away,
 * the implementation is stopped. Either way the call's signal is aborted, so whatever waits on it ends.
 */
async function* answerFrames(answers: AsyncIterable<unknown>, context: CallContext, writeFrame: FrameWriter<never>): AsyncGenerator<Uint8Array> {
  const it = answers[Symbol.asyncIterator]();
  let over = false;
  try {
    for (;;) {
      let next: IteratorResult<unknown>;
      try {
        next = await it.next();
      } catch (err) {
        over = true;
        context.abort(err);
        setTrailerStatus(context.responseTrailer, err instanceof ConnectError ? err : new ConnectError("internal error", Code.Internal, undefined, undefined, err));
        return;
      }
      if (next.done) {
        over = true;
        context.abort();
        return;
      }
      yield writeFrame(next.value as never);
    }
  } finally {
    if (!over) {
      context.abort();
      await it.return?.();
    }
  }
}
