import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import type { AttachRequestSchema, AttachResponse, FollowEvent, FollowRequestSchema, FollowResponse, TerminalService } from "../../../gen/terminal/v1/terminal_pb.js";

type FollowRequestInit = MessageInitShape<typeof FollowRequestSchema>;

/** One Follow call driven by a test: requests sent as it goes, every message kept as it arrives. */
export interface FollowSession {
  start(followId: number, attach: MessageInitShape<typeof AttachRequestSchema>): Promise<void>;
  stop(followId: number): Promise<void>;
  pause(followId: number): Promise<void>;
  resume(followId: number): Promise<void>;
  /** Ends the requests; the call goes on until every follow ended. */
  closeRequests(): void;
  /** Cancels the call. */
  cancel(): void;
  /** Every message received so far. */
  readonly messages: readonly FollowResponse[];
  /** The events received so far for `followId`, in order. */
  eventsOf(followId: number): FollowEvent[];
  /** Resolves with the events of `followId` once its end arrived; rejects if the call ends first. */
  ended(followId: number): Promise<FollowEvent[]>;
  /** Resolves once `check` holds after a message; rejects if the call ends first. */
  until(check: () => boolean): Promise<void>;
  /** Resolves when the call ends: with its error, or undefined when it ended with OK. */
  readonly finished: Promise<unknown>;
  /** Ends the requests, then resolves as `finished` does. */
  closeAndFinish(): Promise<unknown>;
}

/** Opens a Follow call on `client`. */
export function openFollow(client: Client<typeof TerminalService>): FollowSession {
  const requests = createWritableIterable<FollowRequestInit>();
  const controller = new AbortController();
  const messages: FollowResponse[] = [];
  const byFollow = new Map<number, FollowEvent[]>();
  const waiters = new Set<{ check: () => boolean; resolve: () => void; reject: (err: unknown) => void }>();
  let over: { error: unknown } | undefined;
  const wake = (): void => {
    for (const waiter of waiters) {
      if (waiter.check()) waiter.resolve();
      else if (over) waiter.reject(over.error ?? new Error("the Follow call ended first"));
      else continue;
      waiters.delete(waiter);
    }
  };
  const done = (async () => {
    for await (const message of client.follow(requests, { signal: controller.signal })) {
      messages.push(message);
      for (const event of message.events) {
        const events = byFollow.get(event.followId) ?? [];
        byFollow.set(event.followId, events);
        events.push(event);
      }
      wake();
    }
  })().then(
    () => void (over = { error: undefined }),
    (error: unknown) => void (over = { error }),
  );
  void done.then(wake);
  const send = (action: FollowRequestInit["action"]): Promise<void> => requests.write({ action });
  const eventsOf = (followId: number): FollowEvent[] => [...(byFollow.get(followId) ?? [])];
  const until = (check: () => boolean): Promise<void> =>
    new Promise((resolve, reject) => {
      waiters.add({ check, resolve, reject });
      wake();
    });
  const finished = done.then(() => over?.error);
  return {
    start: (followId, attach) => send({ case: "start", value: { followId, attach } }),
    stop: (followId) => send({ case: "stop", value: followId }),
    pause: (followId) => send({ case: "pause", value: followId }),
    resume: (followId) => send({ case: "resume", value: followId }),
    closeRequests: () => requests.close(),
    cancel: () => controller.abort(),
    messages,
    eventsOf,
    until,
    ended: async (followId) => {
      await until(() => eventsOf(followId).some((event) => event.kind.case === "end"));
      return eventsOf(followId);
    },
    finished,
    closeAndFinish: () => {
      requests.close();
      return finished;
    },
  };
}

/** The Attach events among a follow's events. */
export function attachEventsOf(events: readonly FollowEvent[]): AttachResponse[] {
  return events.flatMap((event) => (event.kind.case === "event" ? [event.kind.value] : []));
}

/** The output bytes among Attach events, joined. */
export function outputOf(events: readonly AttachResponse[]): Buffer {
  return Buffer.concat(events.flatMap((event) => (event.event.case === "output" ? [event.event.value.data] : [])));
}

/** Each output event's start and end offsets. */
export function outputRanges(events: readonly AttachResponse[]): Array<[number, number]> {
  return events.flatMap((event) => (event.event.case === "output" ? [[Number(event.offset), Number(event.event.value.endOffset)] as [number, number]] : []));
}
