import { Code, ConnectError } from "@connectrpc/connect";
import { sameClaim } from "../../ahp/claims.js";
import type { TerminalAction, TerminalClaim } from "../../ahp/types.js";
import type { TerminalInfo as RunnerTerminalInfo } from "../../gen/terminal/v1/terminal_pb.js";
import { jsonRpcErrorFromRunner } from "../runners/runner-errors.js";
import { claimFromLabel, LABEL_CLAIM, LABEL_TITLE } from "../runners/runner-labels.js";
import type { TerminalLink } from "./terminal-link.js";

/** A client's change to a label-borne part of a terminal (its claim or its title). */
export type LabelAction = Extract<TerminalAction, { type: "terminal/claimed" | "terminal/titleChanged" }>;

/** Conditional writes tried when the record moved on for reasons that do not touch the label (a resize, a cwd): each is tried again from the new revision. */
const MAX_LABEL_WRITE_ATTEMPTS = 5;

/** What a conditional label write does around the runner: commits once it holds, rechecks a claim that moved, and hands over the record seen meanwhile. */
export interface LabelWriteOptions {
  /** Commits the change (echo and broadcast); run once the runner took it, before any record seen meanwhile is applied. */
  commit(): void;
  /** For a claim another client changed meanwhile: why the change is refused against the claim now recorded, or undefined when it still may be made. */
  recheck?: (claim: TerminalClaim) => string | undefined;
  /** Takes the latest record the runner reported while this gateway's writes were in flight. */
  settled(deferred: RunnerTerminalInfo): void;
}

/**
 * Writes a client's claim or title change to the runner's record on condition that the label is
 * still what this gateway saw when it checked the change: `SetLabels` with the revision then. When
 * the record moved on, the label is read again: unchanged (a resize, a cwd moved the revision), the
 * write is tried again from the new revision; a claim another client changed is checked again
 * (`recheck`) and written when still allowed; a title another client changed is refused. Runs in
 * the terminal's effect queue, after the resize or clear accepted before it. Resolves to undefined
 * once applied and committed, or to the reason it was not.
 */
export function writeLabelConditionally(link: TerminalLink, action: LabelAction, options: LabelWriteOptions): Promise<string | undefined> {
  const key = action.type === "terminal/claimed" ? LABEL_CLAIM : LABEL_TITLE;
  const seen = { value: link.labels[key], revision: link.revision };
  let lost: string | undefined;
  link.labelWrites++;
  return link
    .queue(
      async () => (lost = await write(link, action, key, seen, options)),
      (err) => (lost = jsonRpcErrorFromRunner(err, "change the terminal").message),
    )
    .then(() => lost);
}

async function write(link: TerminalLink, action: LabelAction, key: string, seen: { value: string | undefined; revision: bigint }, options: LabelWriteOptions): Promise<string | undefined> {
  const value = action.type === "terminal/claimed" ? JSON.stringify(action.claim) : action.title;
  let expectedRevision = seen.revision;
  try {
    for (let attempt = 0; attempt < MAX_LABEL_WRITE_ATTEMPTS; attempt++) {
      try {
        const { terminal } = await link.runner.terminals.setLabels({ id: link.runnerId, set: { [key]: value }, expectedRevision });
        if (terminal) link.saw(terminal);
        if (action.type === "terminal/titleChanged") link.keepClientTitle();
        options.commit();
        return undefined;
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Aborted) return jsonRpcErrorFromRunner(err, action.type === "terminal/claimed" ? "claim the terminal" : "rename the terminal").message;
        const { terminal } = await link.runner.terminals.get({ id: link.runnerId });
        if (!terminal) break;
        const now = terminal.labels[key];
        if (!sameLabel(key, now, seen.value)) {
          if (key !== LABEL_CLAIM) return "another client renamed the terminal first";
          const refusal = options.recheck ? options.recheck(claimFromLabel(now)) : "another client changed the terminal's claim first";
          if (refusal) return refusal;
          seen.value = now;
        }
        expectedRevision = terminal.revision;
      }
    }
    return "the terminal's record kept changing; try again";
  } finally {
    link.labelWrites--;
    const deferred = link.labelWrites === 0 ? link.deferred : undefined;
    if (deferred) {
      link.deferred = undefined;
      options.settled(deferred);
    }
  }
}

/** True when two values of a label say the same (claims compared as claims, whatever their JSON's key order). */
function sameLabel(key: string, a: string | undefined, b: string | undefined): boolean {
  if (key !== LABEL_CLAIM || a === undefined || b === undefined) return a === b;
  return sameClaim(claimFromLabel(a), claimFromLabel(b));
}
