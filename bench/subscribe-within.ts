import { ErrorCode } from "../ahp/error-codes.js";
import { JsonRpcError } from "../ahp/json-rpc-error.js";
import type { BenchClient } from "./support.js";
import { sleep } from "./support.js";

/** Pause between `subscribe` attempts while a gateway does not know a channel yet (it may learn of it from a runner). */
const RESUBSCRIBE_PAUSE_MS = 100;

/** A subscription's outcome: the snapshot, or the gateway's last refusal; and how long it took. */
export interface Subscribed {
  snapshot?: any;
  refusal?: string;
  ms: number;
}

/**
 * Subscribes `client` to `channel`, asking again while the gateway answers "unknown channel", for up
 * to `withinMs`: a terminal created through another gateway is unknown until this one hears of it.
 */
export async function subscribeWithin(client: BenchClient, channel: string, withinMs: number): Promise<Subscribed> {
  const started = performance.now();
  for (;;) {
    try {
      const { snapshot } = await client.call("subscribe", { channel });
      return { snapshot, ms: performance.now() - started };
    } catch (error) {
      const unknown = error instanceof JsonRpcError && error.code === ErrorCode.NotFound;
      if (!unknown || performance.now() - started + RESUBSCRIBE_PAUSE_MS > withinMs) return { refusal: refusalOf(error), ms: performance.now() - started };
    }
    await sleep(RESUBSCRIBE_PAUSE_MS);
  }
}

/** A refusal as reports print it: the JSON-RPC code and message. */
export function refusalOf(error: unknown): string {
  return error instanceof JsonRpcError ? `${error.code} ${error.message}` : String(error);
}
