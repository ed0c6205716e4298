import type { ActionEnvelope } from "../../ahp/types.js";
import { outputOffsetOf } from "../state/output-offset.js";

/**
 * The `action` frame of an output envelope with its runner offset in `_meta` (docs/ahp.md,
 * `_meta.offsets`), made from the envelope's shared frame without serialising its output again;
 * the shared frame itself when the envelope carries no offset.
 */
export function frameWithOffset(envelope: ActionEnvelope, shared: string): string {
  const offset = outputOffsetOf(envelope);
  // A notification frame ends with the envelope's closing brace and its own.
  if (offset === undefined || !shared.endsWith("}}")) return shared;
  return `${shared.slice(0, -2)},"_meta":{"offset":${offset}}}}`;
}

/** An output envelope with its runner offset in `_meta`, for a reply that carries envelopes (a reconnect's replay); others as they are. */
export function envelopeWithOffset(envelope: ActionEnvelope): ActionEnvelope {
  const offset = outputOffsetOf(envelope);
  return offset === undefined ? envelope : { ...envelope, _meta: { ...envelope._meta, offset } };
}
