import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, type HandlerContext } from "@connectrpc/connect";
import { AttachRequestSchema, type FollowRequest, type FollowResponseSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { untilAborted } from "../../../lib/until-aborted.js";
import { FollowBatches } from "../terminal/follow-batches.js";
import { connectErrorFrom } from "./connect-error.js";
import { FollowPump, type FollowPumpContext } from "./follow-pump.js";
import { followResponseOf, wireFollowEnd, withParsedEvents, type WireFollowEvent } from "./follow-wire.js";
import { isJsonContentType } from "./request-body-check.js";

/** What a Follow stream needs: the terminals, the stream's heartbeat interval, a logger and the metrics. */
export type FollowStreamOptions = Omit<FollowPumpContext, "batches"> & { heartbeatMs: number };

/**
 * Serves one Follow call: reads its requests while it sends, runs a pump per started follow, and
 * sends their events in the batches' messages. Ends once the requests ended and every follow did;
 * when the call ends any other way, every follow is stopped and its reader closed.
 */
export async function* followStream(
  requests: AsyncIterable<FollowRequest>,
  context: HandlerContext,
  options: FollowStreamOptions,
): AsyncGenerator<MessageInitShape<typeof FollowResponseSchema>> {
  const batches = new FollowBatches<object, WireFollowEvent>({ heartbeatMs: options.heartbeatMs });
  const pumpContext: FollowPumpContext = { ...options, batches };
  const follows = new Map<number, FollowPump>();
  const over = new AbortController();
  let requestsEnded = false;
  const endWhenIdle = (): void => {
    if (requestsEnded && follows.size === 0) batches.end();
  };
  const start = (followId: number, attach = create(AttachRequestSchema)): void => {
    if (follows.has(followId)) {
      const message = `follow_id ${followId} is in use by a follow that has not ended`;
      const end = wireFollowEnd(followId, Code.InvalidArgument, message);
      batches.add({}, end, end.length);
      return;
    }
    const pump = new FollowPump(followId, attach, pumpContext);
    follows.set(followId, pump);
    void pump
      .run()
      .catch((err: unknown) => options.log.error({ err, rpc: "Follow" }, "a follow failed to close its reader"))
      .then(() => {
        if (follows.get(followId) === pump) follows.delete(followId);
        endWhenIdle();
      });
  };
  const act = ({ action }: FollowRequest): void => {
    if (over.signal.aborted) return;
    switch (action.case) {
      case "start":
        return start(action.value.followId, action.value.attach);
      case "stop": {
        const pump = follows.get(action.value);
        if (!pump) return;
        follows.delete(action.value);
        pump.stop();
        batches.drop(pump);
        return endWhenIdle();
      }
      case "pause":
        return follows.get(action.value)?.pause();
      case "resume":
        return follows.get(action.value)?.resume();
    }
  };
  void (async () => {
    for await (const request of untilAborted(requests, over.signal)) act(request);
    requestsEnded = true;
    endWhenIdle();
  })().catch((err: unknown) => over.signal.aborted || batches.fail(err));
  try {
    const json = isJsonContentType(context.requestHeader.get("content-type"));
    for await (const events of batches.batches(context.signal)) yield json ? withParsedEvents(followResponseOf(events)) : followResponseOf(events);
  } catch (err) {
    // A caller that went away (or a server shutting down) is not an error of the runner's.
    if (context.signal.aborted) throw context.signal.reason;
    throw connectErrorFrom(err, options.log, "Follow");
  } finally {
    over.abort();
    for (const pump of follows.values()) pump.stop();
  }
}
