import { create, isMessage, type DescMessage, type DescMethodStreaming } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext, type HandlerContext, type Interceptor, type MethodImplSpec, type StreamRequest, type StreamResponse } from "@connectrpc/connect";
import {
  assertByteStreamRequest,
  compressionNegotiate,
  uResponseMethodNotAllowed,
  uResponseOk,
  untilFirst,
  type UniversalHandler,
} from "@connectrpc/connect/protocol";
import { contentTypeProto, grpcStatusOk, headerContentType, headerEncoding, headerAcceptEncoding, headerGrpcStatus, headerTimeout, parseContentType, parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import type { FrameWriter } from "../../../lib/grpc-frames.js";
import { CALL_BODY } from "./call-context.js";
import { directRequestMessages } from "./direct-request.js";
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

/**
 * Serves `methods` over binary gRPC (`application/grpc`, `application/grpc+proto`) without connect's
 * per-message stages, and leaves every other protocol of theirs to connect's handler in `handlers`.
 * Connect passes each request through three async stages (split, decompress, parse) and each answer
 * through three more, copying its bytes twice (protobuf's `finish`, then the envelope): for Follow's
 * output that was a sixth of the runner's CPU under a flood. Here a request is read from node's
 * request as it arrives, and split and parsed in the event that brought it (direct-request.ts); an
 * answer is written into its frame once. The call around the messages is as connect's: its
 * context, deadline (`grpc-timeout`), compression negotiation (none is accepted), interceptors
 * (token, tracing, metrics, refusal log; run around the implementation here, in connect's order),
 * and the status in the trailers. It wraps the handlers after
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
    // Read from node's request as it arrives (server.ts puts it in every call's context), not through connect's body.
    const body = request.contextValues?.get(CALL_BODY);
    if (!body) throw new ConnectError("a direct call needs its request body in its context (callContextValues)", Code.Internal);
    const requests = directRequestMessages(body, spec.method.input, maxMessageBytes, timeout.error ?? compression.error);
    const call = () => callThroughInterceptors(spec, context, interceptors, requests);
    return { ...uResponseOk, body: await untilFirst(answerFrames(call, context, writeFrame)), header: context.responseHeader, trailer: context.responseTrailer };
  };
}

type AnyStreamFn = (request: StreamRequest<DescMessage, DescMessage>) => Promise<StreamResponse<DescMessage, DescMessage>>;

/**
 * The call as connect's handlers make it (every interceptor around the implementation, which gets
 * the request as the interceptors leave it), without the stages connect adds that only pass each
 * answer on: a generator emulated in older JavaScript, and a wrapper that checks every answer is a
 * message (the direct methods' implementations answer with messages; a client stream's one answer
 * is made one here, as connect makes it).
 */
function callThroughInterceptors(spec: DirectMethod["spec"], context: CallContext, interceptors: Interceptor[], requests: AsyncIterable<unknown>): Promise<StreamResponse<DescMessage, DescMessage>> {
  const method = spec.method as DescMethodStreaming;
  const output = (answer: unknown) => (isMessage(answer, method.output) ? answer : create(method.output, answer as never));
  const implementation: AnyStreamFn = async (request) => {
    const implContext = { ...context, service: request.service, requestHeader: request.header, signal: request.signal, values: request.contextValues };
    let message: AsyncIterable<unknown>;
    if (spec.kind === "client_streaming") message = oneAnswer(output(await spec.impl(request.message, implContext)));
    else if (spec.kind === "bidi_streaming") message = spec.impl(request.message, implContext);
    else throw new ConnectError(`a ${spec.kind} method is not served directly`, Code.Internal);
    return { stream: true, service: method.parent, method, header: context.responseHeader, trailer: context.responseTrailer, message: message as AsyncIterable<never> };
  };
  const next = interceptors.reduceRight<AnyStreamFn>((inner, interceptor) => interceptor(inner as never) as unknown as AnyStreamFn, implementation);
  return next({
    stream: true,
    service: method.parent,
    method,
    requestMethod: context.requestMethod,
    url: context.url,
    signal: context.signal,
    header: context.requestHeader,
    contextValues: context.values,
    message: requests as AsyncIterable<never>,
  });
}

async function* oneAnswer(answer: unknown): AsyncGenerator<unknown> {
  yield answer;
}

/**
 * Each answer as its frame, the response's header and trailer copied into the call's as connect
 * copies them. When the call or the implementation fails, its error becomes the trailers' status
 * (an error that is not a ConnectError is INTERNAL, its words kept out); when the caller goes away,
 * the implementation is stopped. Either way the call's signal is aborted, so whatever waits on it ends.
 */
async function* answerFrames(call: () => Promise<StreamResponse<DescMessage, DescMessage>>, context: CallContext, writeFrame: FrameWriter<never>): AsyncGenerator<Uint8Array> {
  let it: AsyncIterator<unknown> | undefined;
  let trailer: Headers | undefined;
  let over = false;
  try {
    for (;;) {
      let next: IteratorResult<unknown>;
      try {
        if (!it) {
          const response = await call();
          copyHeaders(response.header, context.responseHeader);
          trailer = response.trailer;
          it = response.message[Symbol.asyncIterator]();
        }
        next = await it.next();
      } catch (err) {
        over = true;
        context.abort(err);
        setTrailerStatus(context.responseTrailer, err instanceof ConnectError ? err : new ConnectError("internal error", Code.Internal, undefined, undefined, err));
        return;
      }
      if (next.done) {
        over = true;
        if (trailer) copyHeaders(trailer, context.responseTrailer);
        context.abort();
        return;
      }
      yield writeFrame(next.value as never);
    }
  } finally {
    if (!over) {
      context.abort();
      await it?.return?.();
    }
  }
}

/** Puts `from`'s fields in place of `to`'s, unless they are the same headers (as an interceptor that changed nothing leaves them). */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  const keys: string[] = [];
  to.forEach((_, key) => keys.push(key));
  for (const key of keys) to.delete(key);
  from.forEach((value, key) => to.set(key, value));
}
