import { ROOT_URI } from "../ahp/types.js";
import type { GatewayFleet } from "./gateway-fleet.js";
import { subscribeWithin } from "./subscribe-within.js";
import { BenchClient, sleep, timings } from "./support.js";

/** A change counts as propagated only if the other gateway's client saw it within this (the bound). */
export const SEEN_WITHIN_MS = 5_000;
/** The next change is sent once this one was seen both ways, or this long after it was sent, whichever is first. */
const GAP_MS = 100;
/** Client claims are handed round this many holders, so a late sighting of an earlier handover to the same holder is GAP_MS × HOLDERS old. */
const HOLDERS = 3;

interface Sample {
  sentAt: number;
  /** When the observer saw it: on the terminal's channel, and as the terminal's row in the root list. */
  terminalAt?: number;
  rootAt?: number;
  rejection?: string;
  matchesTerminal(action: any): boolean;
  matchesRow(row: any): boolean;
}

/**
 * Titles and client-claim handovers dispatched by clients on gateway 2, and the moment a client on
 * gateway 1 (subscribed to the root channel and to the terminal) sees each: `samples` of each kind.
 */
export async function propagation(fleet: GatewayFleet, samples: number): Promise<Record<string, unknown>> {
  const [observerUrl, senderUrl] = fleet.urls();
  const uri = `ahp-terminal:/propagation-${Date.now()}`;
  const prefix = `bench-holder-${Date.now()}`;
  const holders = await Promise.all(Array.from({ length: HOLDERS }, (_, i) => BenchClient.connect(senderUrl!, `${prefix}-${i}`)));
  const observer = await BenchClient.connect(observerUrl!);
  try {
    await holders[0]!.call("createTerminal", { channel: uri });
    await observer.call("subscribe", { channel: ROOT_URI });
    const subscribed = await subscribeWithin(observer, uri, SEEN_WITHIN_MS);
    const pending: Sample[] = [];
    observer.onAction = (envelope) => {
      const at = performance.now();
      const row = envelope.action.type === "root/terminalsChanged" ? envelope.action.terminals.find((terminal: any) => terminal.resource === uri) : undefined;
      for (const sample of pending) {
        if (sample.terminalAt === undefined && envelope.channel === uri && sample.matchesTerminal(envelope.action)) sample.terminalAt = at;
        if (sample.rootAt === undefined && row && sample.matchesRow(row)) sample.rootAt = at;
      }
    };
    const send = async (sender: BenchClient, action: Record<string, unknown>, sample: Omit<Sample, "sentAt">) => {
      const entry: Sample = { ...sample, sentAt: performance.now() };
      pending.push(entry);
      entry.rejection = await dispatched(sender, uri, action);
      const seen = () => entry.terminalAt !== undefined && entry.rootAt !== undefined;
      while (!seen() && performance.now() - entry.sentAt < GAP_MS) await sleep(1);
      return entry;
    };

    const titles: Sample[] = [];
    for (let i = 0; i < samples; i++) {
      const title = `bench-title-${i}`;
      titles.push(await send(holders[0]!, { type: "terminal/titleChanged", title }, { matchesTerminal: (action) => action.type === "terminal/titleChanged" && action.title === title, matchesRow: (row) => row.title === title }));
    }
    const claims: Sample[] = [];
    let holder = 0;
    for (let i = 0; i < samples; i++) {
      const next = (holder + 1) % HOLDERS;
      const clientId = `${prefix}-${next}`;
      const isNext = (claim: any) => claim?.kind === "client" && claim.clientId === clientId;
      const sample = await send(holders[holder]!, { type: "terminal/claimed", claim: { kind: "client", clientId } }, { matchesTerminal: (action) => action.type === "terminal/claimed" && isNext(action.claim), matchesRow: (row) => isNext(row.claim) });
      claims.push(sample);
      if (sample.rejection === undefined) holder = next;
    }
    const lastSent = Math.max(...pending.map((sample) => sample.sentAt));
    while (pending.some((sample) => sample.terminalAt === undefined || sample.rootAt === undefined) && performance.now() - lastSent < SEEN_WITHIN_MS) await sleep(10);
    await holders[0]!.call("disposeTerminal", { channel: uri }).catch(() => undefined);
    return {
      observerOn: fleet.names()[0],
      sentThrough: fleet.names()[1],
      observerSubscribedToTerminal: subscribed.snapshot !== undefined,
      ...(subscribed.refusal ? { observerRefused: subscribed.refusal } : {}),
      title: summary(titles),
      claim: summary(claims),
    };
  } finally {
    for (const client of [...holders, observer]) client.close();
  }
}

/** Dispatches `action` and resolves with the sender's own echo: undefined when accepted, else the rejection's reason. */
function dispatched(sender: BenchClient, channel: string, action: Record<string, unknown>): Promise<string | undefined> {
  return new Promise((done) => {
    const timer = setTimeout(() => done(`no echo within ${SEEN_WITHIN_MS} ms`), SEEN_WITHIN_MS);
    let clientSeq = -1;
    sender.onAction = (envelope) => {
      if (envelope.origin?.clientSeq !== clientSeq) return;
      clearTimeout(timer);
      done(envelope.rejectionReason);
    };
    clientSeq = sender.dispatch(channel, action);
  });
}

/** One kind's figures: delays (ms) of the changes seen within SEEN_WITHIN_MS on each path, and how many were not. */
function summary(samples: Sample[]): Record<string, unknown> {
  const accepted = samples.filter((sample) => sample.rejection === undefined);
  const path = (at: (sample: Sample) => number | undefined) => {
    const delays = accepted.map((sample) => (at(sample) ?? Number.POSITIVE_INFINITY) - sample.sentAt);
    const seen = delays.filter((delay) => delay <= SEEN_WITHIN_MS);
    return { ...timings(seen), notSeenWithin5s: accepted.length - seen.length };
  };
  const rejections = samples.filter((sample) => sample.rejection !== undefined);
  return {
    sent: samples.length,
    rejected: rejections.length,
    ...(rejections.length ? { firstRejection: rejections[0]!.rejection } : {}),
    viaTerminalChannel: path((sample) => sample.terminalAt),
    viaRootList: path((sample) => sample.rootAt),
  };
}
