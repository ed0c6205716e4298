import type { Readable } from "node:stream";
import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { FrameReader } from "../../../lib/grpc-frames.js";
import { MessageQueue } from "../../../lib/message-queue.js";
import { EnvelopeGate } from "./message-size-gate.js";
import { invalidBody } from "./request-body-check.js";

/** The size gate's check for direct calls: none, since their messages are parsed (and a malformed one refused) where they are read. */
const ACCEPT_WHOLE_MESSAGE = (): void => {};

/**
 * A direct call's request messages of `schema`, read from its `body` as its bytes arrive: each
 * chunk is gated for size (a message over `maxBytes` is read and dropped, then RESOURCE_EXHAUSTED,
 * as for every other call), split and parsed in the event that brought it, and handed to a reader
 * that waits in that turn. A keystroke's message thus reaches the terminal without passing through
 * the stream stages connect's body takes (node's async iterator, connect's generator and two of
 * the runner's own), which cost the runner about a sixth of its CPU per keystroke. A malformed
 * message is INVALID_ARGUMENT in the words of the request-body check; `refusal` (a bad deadline,
 * compression) ends the call before anything is read. Nothing is read before the implementation
 * asks for the first message, so a call its interceptors refuse (a wrong token) costs no buffering;
 * a reader that falls behind pauses the body.
 */
export function directRequestMessages<I extends DescMessage>(body: Readable, schema: I, maxBytes: number, refusal: ConnectError | undefined): AsyncIterable<MessageShape<I>> {
  const messages = new MessageQueue<MessageShape<I>>(body);
  if (refusal) {
    messages.end(refusal);
    return messages;
  }
  let reading = false;
  return {
    [Symbol.asyncIterator]: () => {
      if (!reading) {
        reading = true;
        readInto(messages, body, schema, maxBytes);
      }
      return messages;
    },
  };
}

/** Feeds `messages` from `body` until its end, or until it fails: then the queue ends with the error and the body stays paused. */
function readInto<I extends DescMessage>(messages: MessageQueue<MessageShape<I>>, body: Readable, schema: I, maxBytes: number): void {
  const gate = new EnvelopeGate(maxBytes, ACCEPT_WHOLE_MESSAGE);
  const reader = new FrameReader(schema, maxBytes, (bytes) => {
    try {
      return fromBinary(schema, bytes);
    } catch {
      throw invalidBody(schema);
    }
  });
  // A chunk's messages are handed over once all of it has been read: with a malformed message
  // behind them, the call is refused and none of them reaches a terminal. Those before an oversized
  // one are whole and well-formed, and go on before the refusal, as through connect's body.
  const parsed: MessageShape<I>[] = [];
  const keep = (message: MessageShape<I>): void => void parsed.push(message);
  const handOver = (): void => {
    for (const message of parsed.splice(0)) messages.push(message);
  };
  const onData = (chunk: Uint8Array): void => {
    try {
      for (const piece of gate.take(chunk)) reader.read(piece, keep);
      handOver();
      if (gate.refusal) fail(gate.refusal);
    } catch (err) {
      fail(err);
    }
  };
  const onEnd = (): void => {
    try {
      for (const piece of gate.finish()) reader.read(piece, keep);
      handOver();
      if (gate.refusal) return fail(gate.refusal);
      reader.finish();
      stop();
      messages.end();
    } catch (err) {
      fail(err);
    }
  };
  const onError = (err: unknown): void => fail(err);
  // Closed before its end: the caller reset the stream or went away. Whatever waits on the messages
  // stops with node's own error for it, which the service maps to CANCELED and logs at debug.
  const onClose = (): void => fail(Object.assign(new Error("the caller closed the request before its end"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
  const stop = (): void => {
    body.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
  };
  // Nothing more is read once the call is refused: the body stays paused, and HTTP/2 flow control holds the caller back.
  const fail = (err: unknown): void => {
    parsed.length = 0;
    stop();
    body.pause();
    messages.end(err);
  };
  body.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  // Reset before the implementation asked for anything: its close has been and gone.
  if (body.destroyed && !body.readableEnded) onClose();
}
