import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { AttachRequestSchema, AttachResponse, FollowRequestSchema, TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { createWritableIterable, type WritableIterable } from "@connectrpc/connect/protocol";

/** What following a terminal needs of its runner: the terminal's events from an offset, as Attach streams them. */
export interface TerminalEvents {
  attach(request: MessageInitShape<typeof AttachRequestSchema>, options: { signal: AbortSignal }): AsyncIterable<AttachResponse>;
}

/**
 * Events of one follow the gateway has not taken yet, above which the runner is asked to stop
 * reading that terminal (its follower waits for a client's room). A follower briefly behind under a
 * flood holds a few 64 KiB events: at 64 KiB, one event in nine of a `cat` flood paused and resumed
 * it (two more messages each way, and a stalled runner), and the flood cost 6 % more CPU per MB.
 */
const PAUSE_ABOVE_BYTES = 256 * 1024;
/** Untaken bytes below which a paused follow is read again: one event's worth, so the follower does not run dry before the runner's next batch. */
const RESUME_BELOW_BYTES = 64 * 1024;
/** What a non-output event counts for in those bytes. */
const EVENT_BYTES = 64;
/** FollowEnd's code for a follow that ended as an Attach stream ends normally (gRPC's OK, which connect's Code leaves out). */
const ENDED_NORMALLY = 0;

type Request = MessageInitShape<typeof FollowRequestSchema>;

/** One terminal followed on the shared stream: its untaken events, and how it ended. */
interface Follow {
  events: AttachResponse[];
  bytes: number;
  paused: boolean;
  /** The runner's end of it: a gRPC code (0: ended as an Attach stream ends) and message. */
  end?: { code: number; message: string };
  /** The shared stream broke before the follow ended. */
  failure?: ConnectError;
  wake?: () => void;
}

/** One Follow call to the runner and the follows it carries. */
interface FollowStream {
  requests: WritableIterable<Request>;
  follows: Map<number, Follow>;
  nextId: number;
}

/** Queues a request on the stream; one written after the stream closed has nothing left to act on, and is dropped. */
const send = (stream: FollowStream, request: Request): void => void stream.requests.write(request).catch(() => undefined);

const sizeOf = (event: AttachResponse): number => (event.event.case === "output" ? event.event.value.data.length : EVENT_BYTES);

/**
 * Every followed terminal of one runner over one Follow stream, each presented as its own Attach:
 * the runner batches busy terminals' output into shared messages, so a message's fixed cost (the
 * RPC machinery on both sides, an HTTP/2 frame) is paid per batch instead of per terminal read. A
 * follow whose events are not taken is paused at the runner, which then holds its output back as for
 * an unread Attach stream. When the stream breaks, every follow on it fails (its follower attaches
 * again, opening a new stream); a runner without Follow is attached to terminal by terminal.
 */
export class FollowMux implements TerminalEvents {
  private stream: FollowStream | undefined;
  private unsupported = false;

  constructor(private readonly runner: Client<typeof TerminalService>) {}

  async *attach(request: MessageInitShape<typeof AttachRequestSchema>, { signal }: { signal: AbortSignal }): AsyncGenerator<AttachResponse> {
    if (this.unsupported) return yield* this.runner.attach(request, { signal });
    signal.throwIfAborted();
    const stream = this.stream ?? this.open();
    const id = stream.nextId++;
    const follow: Follow = { events: [], bytes: 0, paused: false };
    stream.follows.set(id, follow);
    send(stream, { action: { case: "start", value: { followId: id, attach: request } } });
    const woken = (): void => follow.wake?.();
    signal.addEventListener("abort", woken);
    let taken = 0;
    try {
      for (;;) {
        signal.throwIfAborted();
        const event = follow.events.shift();
        if (event) {
          taken++;
          follow.bytes -= sizeOf(event);
          if (follow.paused && follow.bytes < RESUME_BELOW_BYTES && stream.follows.has(id)) {
            follow.paused = false;
            send(stream, { action: { case: "resume", value: id } });
          }
          yield event;
          continue;
        }
        if (follow.end) {
          if (follow.end.code === ENDED_NORMALLY) return;
          throw new ConnectError(follow.end.message, follow.end.code as Code);
        }
        if (follow.failure) {
          if (follow.failure.code !== Code.Unimplemented || taken > 0) throw follow.failure;
          // A runner from before Follow: this terminal (and every later one) gets its own Attach.
          this.unsupported = true;
          return yield* this.runner.attach(request, { signal });
        }
        await new Promise<void>((resolve) => (follow.wake = resolve));
        follow.wake = undefined;
      }
    } finally {
      signal.removeEventListener("abort", woken);
      this.forget(stream, id, follow);
    }
  }

  private open(): FollowStream {
    const stream: FollowStream = { requests: createWritableIterable(), follows: new Map(), nextId: 1 };
    this.stream = stream;
    void this.read(stream);
    return stream;
  }

  /** A follower that stopped before its end tells the runner to stop; the last one gone closes the stream (the runner ends it once every follow has). */
  private forget(stream: FollowStream, id: number, follow: Follow): void {
    if (stream.follows.get(id) !== follow) return;
    stream.follows.delete(id);
    if (!follow.end && !follow.failure) send(stream, { action: { case: "stop", value: id } });
    if (stream.follows.size > 0 || this.stream !== stream) return;
    this.stream = undefined;
    stream.requests.close();
  }

  private async read(stream: FollowStream): Promise<void> {
    let failure: ConnectError;
    try {
      for await (const response of this.runner.follow(stream.requests)) {
        for (const { followId, kind } of response.events) {
          const follow = stream.follows.get(followId);
          if (!follow || follow.end) continue;
          if (kind.case === "event") {
            follow.events.push(kind.value);
            follow.bytes += sizeOf(kind.value);
            if (!follow.paused && follow.bytes > PAUSE_ABOVE_BYTES) {
              follow.paused = true;
              send(stream, { action: { case: "pause", value: followId } });
            }
          } else if (kind.case === "end") {
            follow.end = { code: kind.value.code, message: kind.value.message };
          }
          follow.wake?.();
        }
      }
      failure = new ConnectError("the runner ended the follow stream", Code.Unavailable);
    } catch (err) {
      failure = ConnectError.from(err);
    }
    if (this.stream === stream) this.stream = undefined;
    stream.requests.close();
    for (const follow of stream.follows.values()) {
      if (follow.end) continue;
      follow.failure = failure;
      follow.wake?.();
    }
  }
}
