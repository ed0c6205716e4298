import type { ActionEnvelope } from "../../ahp/types.js";
import { featuresOf } from "../../ahp/versions.js";
import type { Grant } from "../../gateway/auth/grants.js";
import type { Peer } from "../../gateway/state/channels.js";

/** A subscriber that records what it is sent; `refused` lists grants it lacks. */
export class RecordingPeer implements Peer {
  readonly frames: Array<{ method: string; params: ActionEnvelope }> = [];
  readonly features = featuresOf("0.9.0");
  readonly buffered = 0;
  constructor(
    readonly clientId: string,
    private readonly refused: readonly Grant[] = [],
  ) {}
  sendFrame(frame: string): void {
    this.frames.push(JSON.parse(frame));
  }
  deliver(_envelope: ActionEnvelope, frame: string): void {
    this.sendFrame(frame);
  }
  sendEnvelope(envelope: ActionEnvelope): void {
    this.sendFrame(JSON.stringify({ jsonrpc: "2.0", method: "action", params: envelope }));
  }
  paceFor(): "ready" {
    return "ready";
  }
  accessRefusal(grant: Grant | undefined): string | undefined {
    return grant && this.refused.includes(grant) ? `${this.clientId} may not do this: it needs ${grant}` : undefined;
  }
  lists(): boolean {
    return true;
  }
  messageLimit(): undefined {
    return undefined;
  }
  released(): void {}
  envelopes(channel?: string): ActionEnvelope[] {
    return this.frames.map((frame) => frame.params).filter((envelope) => channel === undefined || envelope.channel === channel);
  }
}
