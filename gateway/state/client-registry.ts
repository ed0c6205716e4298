import type { ProtocolVersion } from "../../ahp/versions.js";

/** Client ids remembered for `reconnect`; the oldest are forgotten first. */
const MAX_REMEMBERED_CLIENTS = 10_000;

/** The protocol version negotiated per clientId, since `reconnect` carries none. */
export class ClientRegistry {
  private readonly versions = new Map<string, ProtocolVersion>();

  /** Remembers (or refreshes) a client's version. */
  remember(clientId: string, version: ProtocolVersion): void {
    this.versions.delete(clientId);
    this.versions.set(clientId, version);
    if (this.versions.size > MAX_REMEMBERED_CLIENTS) this.versions.delete(this.versions.keys().next().value!);
  }

  /** The version a client negotiated, or undefined for a client this gateway never met. */
  versionOf(clientId: string): ProtocolVersion | undefined {
    return this.versions.get(clientId);
  }
}
