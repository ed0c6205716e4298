import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";
import { cappedSafeText } from "../../lib/unsafe-text.js";
import type { ClientName } from "../state/client-registry.js";
import { objectParams, stringList } from "./params.js";
import type { GatewayServices, Session } from "./session.js";

/** The implementation-defined command (AHP reserves `x-`) that names the clients holding claims. */
export const CLIENT_NAMES_METHOD = "x-clientNames";
/** Most client ids one `x-clientNames` asks about: more than a page of claims needs, few enough that one request stays cheap. */
export const MAX_CLIENT_NAME_IDS = 256;
/** Longest client name or version kept from `clientInfo`: a product name and a version, not prose (10,000 remembered clients stay small). */
export const MAX_CLIENT_NAME_CHARS = 100;

/**
 * The name and version in `initialize`'s `clientInfo` (AHP's `Implementation`), cut to
 * MAX_CLIENT_NAME_CHARS with control and bidirectional characters replaced by U+FFFD; what is
 * missing, empty or not a string is left out (an odd `clientInfo` never fails a handshake).
 */
export function clientInfoOf(params: Record<string, unknown>): Pick<ClientName, "client" | "clientVersion"> {
  const info = params.clientInfo;
  if (typeof info !== "object" || info === null) return {};
  const { name, version } = info as { name?: unknown; version?: unknown };
  const kept = (value: unknown): string | undefined => (typeof value === "string" && value.trim() !== "" ? cappedSafeText(value, MAX_CLIENT_NAME_CHARS) : undefined);
  const client = kept(name);
  const clientVersion = client === undefined ? undefined : kept(version);
  return { ...(client === undefined ? {} : { client }), ...(clientVersion === undefined ? {} : { clientVersion }) };
}

/**
 * `x-clientNames {clientIds}`: who the clients with these ids are, as far as the gateway knows, for
 * the ids this connection may ask about: its own, and those holding a client claim on a terminal its
 * root list shows. Others, and ids nothing is known of, are left out. Needs a sign-in (-32007), as
 * every command but the handshake's; more than MAX_CLIENT_NAME_IDS ids is -32602.
 */
export function clientNames(params: unknown, session: Session, { store, clients }: GatewayServices): unknown {
  session.requireAccess(undefined);
  const ids = stringList(objectParams(params, CLIENT_NAMES_METHOD), "clientIds", CLIENT_NAMES_METHOD, true);
  if (ids.length > MAX_CLIENT_NAME_IDS) throw new JsonRpcError(ErrorCode.InvalidParams, `${CLIENT_NAMES_METHOD}: at most ${MAX_CLIENT_NAME_IDS} clientIds, got ${ids.length}`);
  const askable = new Set([session.clientId]);
  for (const row of store.terminalRows()) {
    if (row.claim.kind === "client" && session.lists(store.ownerOf(row.resource))) askable.add(row.claim.clientId);
  }
  const names: Array<[string, ClientName]> = [];
  for (const id of new Set(ids)) {
    const name = askable.has(id) ? clients.nameOf(id) : undefined;
    if (name) names.push([id, name]);
  }
  // fromEntries defines each id as an own property: an id such as "__proto__" stays a plain key.
  return { names: Object.fromEntries(names) };
}
