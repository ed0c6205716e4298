import { parseClaim } from "../../ahp/claims.js";
import type { TerminalClaim, Uri } from "../../ahp/types.js";

/** Runner labels the gateway keeps on each terminal, so a later gateway can recognise and re-adopt it. */
export const LABEL_URI = "ahp.uri";
/** The title a client gave the terminal (absent: the program's own title applies). */
export const LABEL_TITLE = "ahp.title";
/** The claim, as JSON. */
export const LABEL_CLAIM = "ahp.claim";
/** Who the terminal belongs to (`user:<id>`, `token-holder` or `host`), so every gateway applies the same reach rule. */
export const LABEL_OWNER = "ahp.owner";

/** The labels a new terminal starts with. */
export function labelsFor(uri: Uri, claim: TerminalClaim, title: string | undefined, owner: string): Record<string, string> {
  const labels: Record<string, string> = { [LABEL_URI]: uri, [LABEL_CLAIM]: JSON.stringify(claim), [LABEL_OWNER]: owner };
  if (title !== undefined) labels[LABEL_TITLE] = title;
  return labels;
}

/** The claim a label records; a label no gateway wrote gives a terminal held by no connected client. */
export function claimFromLabel(label: string | undefined): TerminalClaim {
  try {
    return parseClaim(JSON.parse(label ?? ""), { requireChat: false });
  } catch {
    return { kind: "client", clientId: "" };
  }
}
