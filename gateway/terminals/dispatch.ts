import { ROOT_URI, type ActionEnvelope, type ActionOrigin, type TerminalAction, type TerminalClaim, type Uri } from "../../ahp/types.js";
import type { Logger } from "../../lib/logger.js";
import { RateLimitedLog } from "../../lib/rate-limited-log.js";
import type { GatewayMetrics, RefusalKind } from "../metrics.js";
import type { Peer } from "../state/channels.js";
import type { StateStore } from "../state/store.js";
import { claimChangeRefusal } from "./claim-policy.js";
import { dispatchRuleOf } from "./dispatch-policy.js";
import { carryOut } from "./effects.js";
import { InputJournal } from "./input-journal.js";
import type { OpenTerminals } from "./open-terminals.js";
import type { TerminalLink } from "./terminal-link.js";

/** What dispatching needs: the state it commits to, the open terminals, a logger and the refusal counter. */
export interface DispatcherOptions {
  store: StateStore;
  terminals: OpenTerminals;
  log: Logger;
  metrics?: GatewayMetrics;
}

/**
 * Handles actions: a client's `dispatchAction` (checked against the dispatch policy; an accepted
 * action is committed, echoed with its origin to every subscriber and the sender, then carried out
 * in the runner, except a claim or title change, which is written to the runner's record first and
 * committed once it holds; a refused one goes back to the sender alone with a reason and changes nothing),
 * and the host's own actions on a terminal (a backend's input or resize).
 */
export class Dispatcher {
  private readonly inputs = new InputJournal();
  private readonly refusals: RateLimitedLog;

  constructor(private readonly options: DispatcherOptions) {
    this.refusals = new RateLimitedLog(options.log);
  }

  /** A client's action on a channel. */
  dispatch(peer: Peer, channel: Uri, clientSeq: number, action: Record<string, unknown>): void {
    const { store, terminals } = this.options;
    const origin: ActionOrigin = { clientId: peer.clientId, clientSeq };
    const refuse = (reason: string, kind: RefusalKind = "invalid"): void => {
      this.options.metrics?.rejectedActions.inc({ reason: kind });
      if (kind === "not_allowed") this.refusals.warn("action", { address: peer.address, clientId: peer.clientId, channel, action: type, reason }, "refused an action the connection may not take");
      peer.sendEnvelope({ channel, action: action as unknown as ActionEnvelope["action"], serverSeq: store.serverSeq, origin, rejectionReason: reason });
    };
    const type = action.type;
    if (typeof type !== "string") return refuse("an action needs a string type", "malformed");
    const rule = dispatchRuleOf(type);
    if (!rule) return refuse(`"${type}" is not an action clients may dispatch`, "not_dispatchable");
    if (channel === ROOT_URI) {
      const refusal = peer.accessRefusal(undefined);
      if (refusal) return refuse(refusal, "not_allowed");
      if (rule.channel !== "root") return refuse(`"${type}" cannot be dispatched to the root channel`);
      const accepted = rule.check(action);
      if (typeof accepted === "string") return refuse(accepted);
      // Root config is each connection's own: applied to it, echoed to it alone, never replayed to others.
      peer.sendEnvelope(store.commitConfig(peer, accepted, origin));
      return;
    }
    const link = terminals.linkAt(channel);
    const state = store.terminalSummary(channel);
    if (!link || !state) return refuse(`No terminal at ${channel}`, "no_terminal");
    if (rule.channel !== "terminal") return refuse(`"${type}" cannot be dispatched to a terminal`);
    const refusal = peer.accessRefusal(rule.grant, channel);
    if (refusal) return refuse(refusal, "not_allowed");
    const accepted = rule.check(action, { running: store.isRunning(channel), claim: state.claim, clientId: peer.clientId, features: peer.features });
    if (typeof accepted === "string") return refuse(accepted);
    if (accepted.type === "terminal/claimed" || accepted.type === "terminal/titleChanged") {
      // The runner's record is what every gateway shows: the change is written there on condition that nobody changed it since
      // it was checked, and committed only then; of two conflicting changes through any gateways, one wins and the other is refused.
      const recheck = accepted.type === "terminal/claimed" ? (claim: TerminalClaim) => claimChangeRefusal(claim, accepted.claim, peer.clientId) : undefined;
      void terminals.writeLabel(link, accepted, () => store.commit(channel, accepted, { origin, alsoTo: peer }), recheck).then((lost) => {
        if (lost !== undefined) refuse(lost, "conflict");
      });
      return;
    }
    // 1.1 clients retry inputs they saw no echo for after a reconnect: the retry gets the first echo again, the process nothing.
    const journaled = accepted.type === "terminal/input" && peer.features.windowedDelivery;
    if (journaled) {
      const serverSeq = this.inputs.retried(peer, peer.clientId, channel, clientSeq, accepted.data);
      if (serverSeq !== undefined) return peer.sendEnvelope({ channel, action: accepted, serverSeq, origin });
    }
    const envelope = store.commit(channel, accepted, { origin, alsoTo: peer });
    if (journaled && envelope) this.inputs.record(peer, peer.clientId, channel, clientSeq, envelope.serverSeq, accepted.data);
    carryOut(link, accepted, this.options.log);
  }

  /** Applies input or a resize the host itself makes on a terminal and carries it out, as for a client's; the host's input is not echoed. */
  act(link: TerminalLink, action: Extract<TerminalAction, { type: "terminal/input" | "terminal/resized" }>): void {
    if (action.type !== "terminal/input") this.options.store.commit(link.uri, action);
    carryOut(link, action, this.options.log);
  }
}
