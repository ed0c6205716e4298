import { ErrorCode } from "../ahp/error-codes.js";
import { JsonRpcError } from "../ahp/json-rpc-error.js";
import type { GatewayFleet } from "./gateway-fleet.js";
import { refusalOf, subscribeWithin } from "./subscribe-within.js";
import { BenchClient, round, sleep } from "./support.js";

/** One failover: the client's gateway killed, the client served again by another one. */
export interface FailoverRun {
  killed: string;
  createdThrough: string;
  /** The client's list of gateways, tried in order (the killed one first: it was connected there). */
  urls: string[];
  subscribedBeforeKill: boolean;
  servedBeforeKill: boolean;
  /** From the kill until the client's socket reported the close. */
  closeSeenMs?: number;
  servedBy?: string;
  handshake?: string;
  attempts: number;
  /** From the kill until the client had a snapshot of its terminal from another gateway. */
  snapshotMs?: number;
  /** From the kill until output written after that snapshot reached the client. */
  freshOutputMs?: number;
  /** Why the client was not served, or what each gateway last answered while it was not. */
  failure?: string;
  refusals?: Record<string, string>;
}

/** How long a moving client keeps going through its list of gateways before it gives up. */
const MOVE_WITHIN_MS = 10_000;
/** Pause after each full pass over the list, as a client's reconnect backoff would. */
const PASS_PAUSE_MS = 100;
/** How long a marker echoed into the terminal may take to reach the client. */
const MARKER_WITHIN_MS = 5_000;
/** Characters of output kept to find a marker in (it may arrive split across envelopes). */
const TAIL_CHARS = 256;

/**
 * `runs` failovers over a fleet of three or more gateways. Run i: a client on gateway A (i) watches a
 * terminal created through gateway B (i+1); A is killed with SIGKILL; the client goes through its
 * list of gateway URLs (B or C first, alternately) until one gives it a snapshot of the terminal
 * (`reconnect`, then `initialize` on -32008, then `subscribe`), and waits for a marker that a second
 * client on B echoes into the terminal after that snapshot. A is restarted on its port afterwards.
 */
export async function failoverRuns(fleet: GatewayFleet, runs: number): Promise<FailoverRun[]> {
  const results: FailoverRun[] = [];
  for (let i = 0; i < runs; i++) {
    const count = fleet.gateways.length;
    const [victim, creator, other] = [i % count, (i + 1) % count, (i + 2) % count];
    const order = i % 2 === 0 ? [victim, creator, other] : [victim, other, creator];
    results.push(await failoverRun(fleet, i, { victim, creator, order }));
    process.stderr.write(`gateways: failover ${i + 1}/${runs}: ${JSON.stringify(results.at(-1))}\n`);
    await fleet.restart(victim);
  }
  return results;
}

async function failoverRun(fleet: GatewayFleet, i: number, plan: { victim: number; creator: number; order: number[] }): Promise<FailoverRun> {
  const names = fleet.names();
  const urls = fleet.urls();
  const uri = `ahp-terminal:/failover-${Date.now()}-${i}`;
  const clientId = `bench-mover-${Date.now()}-${i}`;
  const driver = await BenchClient.connect(urls[plan.creator]!);
  const clients = [driver];
  const result: FailoverRun = { killed: names[plan.victim]!, createdThrough: names[plan.creator]!, urls: plan.order.map((index) => names[index]!), subscribedBeforeKill: false, servedBeforeKill: false, attempts: 0 };
  try {
    await driver.call("createTerminal", { channel: uri });
    const mover = await BenchClient.connect(urls[plan.victim]!, clientId);
    clients.push(mover);
    result.subscribedBeforeKill = (await subscribeWithin(mover, uri, MARKER_WITHIN_MS)).snapshot !== undefined;
    result.servedBeforeKill = await echoSeen(driver, mover, uri, `before-${i}`);
    const closed = new Promise<number>((done) => mover.socket.once("close", () => done(performance.now())));
    const killedAt = performance.now();
    await fleet.kill(plan.victim);
    result.closeSeenMs = round((await Promise.race([closed, sleep(MOVE_WITHIN_MS).then(() => Number.NaN)])) - killedAt);

    const deadline = killedAt + MOVE_WITHIN_MS;
    const refusals: Record<string, string> = {};
    for (let pass = 0; result.servedBy === undefined && performance.now() < deadline; pass++) {
      if (pass > 0) await sleep(PASS_PAUSE_MS);
      for (const index of plan.order.slice(1).concat(plan.order[0]!)) {
        result.attempts++;
        try {
          const moved = await servedBy(urls[index]!, clientId, mover.lastSeenServerSeq, uri);
          clients.push(moved.client);
          result.snapshotMs = round(performance.now() - killedAt);
          result.servedBy = names[index];
          result.handshake = moved.handshake;
          if (await echoSeen(driver, moved.client, uri, `after-${i}`)) result.freshOutputMs = round(performance.now() - killedAt);
          else result.failure = `no fresh output within ${MARKER_WITHIN_MS} ms of the snapshot`;
          break;
        } catch (error) {
          refusals[names[index]!] = refusalOf(error);
        }
      }
    }
    if (Object.keys(refusals).length > 0) result.refusals = refusals;
    if (result.servedBy === undefined) result.failure = `not served within ${MOVE_WITHIN_MS} ms`;
    await driver.call("disposeTerminal", { channel: uri }).catch(() => undefined);
  } finally {
    for (const client of clients) client.close();
  }
  return result;
}

/** Connects to `url` and gets a snapshot of `uri` as a moving client does: `reconnect`, `initialize` on -32008, then `subscribe`. */
async function servedBy(url: string, clientId: string, lastSeenServerSeq: number, uri: string): Promise<{ client: BenchClient; handshake: string }> {
  const client = await BenchClient.open(url);
  try {
    let snapshots: { resource: string }[] = [];
    let handshake = "reconnect";
    try {
      const resumed = await client.reconnect(clientId, lastSeenServerSeq, [uri]);
      if (resumed.type === "snapshot") snapshots = resumed.snapshots;
    } catch (error) {
      if (!(error instanceof JsonRpcError && error.code === ErrorCode.NotFound)) throw error;
      handshake = "initialize";
      snapshots = (await client.initialize(clientId, [uri])).snapshots;
    }
    if (!snapshots.some((snapshot) => snapshot.resource === uri)) {
      await client.call("subscribe", { channel: uri });
      handshake += "+subscribe";
    }
    return { client, handshake };
  } catch (error) {
    client.close();
    throw error;
  }
}

/** Echoes a marker into `uri` through `driver` and resolves whether `reader` saw its output within MARKER_WITHIN_MS. */
function echoSeen(driver: BenchClient, reader: BenchClient, uri: string, name: string): Promise<boolean> {
  // The shell computes the marker's digits, so the echo of the typed command does not match.
  const marker = `${name}-${7 * 6}`;
  return new Promise((done) => {
    let tail = "";
    const timer = setTimeout(() => done(false), MARKER_WITHIN_MS);
    reader.onData(uri, (text) => {
      tail = (tail + text).slice(-TAIL_CHARS);
      if (!tail.includes(marker)) return;
      clearTimeout(timer);
      reader.onData(uri, () => {});
      done(true);
    });
    driver.input(uri, `echo ${name}-$((7*6))\r`);
  });
}
