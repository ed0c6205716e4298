import { ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../lib/logger.js";
import type { TerminalAction } from "../../ahp/types.js";
import type { TerminalLink } from "./terminal-link.js";

/**
 * Carries out an accepted action in the terminal's runner, in order after those before it: input
 * as UTF-8 bytes, size, and clearing the retained output (claims and titles are written before they
 * are accepted: label-writes.ts). A runner that fails is logged; the action stays accepted.
 */
export function carryOut(link: TerminalLink, action: TerminalAction, log: Logger): void {
  const runner = link.runner.terminals;
  const id = link.runnerId;
  const failed = (err: unknown): void =>
    log.warn({ uri: link.uri, action: action.type, err: ConnectError.from(err).message }, "runner did not carry out an accepted action");
  switch (action.type) {
    case "terminal/input":
      // Input has its own ordered stream; it waits for a resize before it, never for a label change.
      link.input.write(Buffer.from(action.data, "utf8"));
      break;
    case "terminal/resized":
      link.input.after(link.queue(() => runner.resize({ id, cols: action.cols, rows: action.rows }), failed));
      break;
    case "terminal/cleared":
      void link.queue(() => runner.clear({ id }), failed);
      break;
    default:
      break;
  }
}
