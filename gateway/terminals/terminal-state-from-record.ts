import { pathToFileURL } from "node:url";
import type { TerminalAction, TerminalState } from "../../ahp/types.js";
import type { TerminalInfo as RunnerTerminalInfo } from "../../gen/terminal/v1/terminal_pb.js";
import { titleFromProgram } from "../../lib/titles.js";
import { claimFromLabel, LABEL_CLAIM, LABEL_TITLE } from "../runners/runner-labels.js";

/** A terminal's first AHP state from the runner's record of it (its content comes from its output, when someone reads it). */
export function stateFromRecord(info: RunnerTerminalInfo): TerminalState {
  const state: TerminalState = {
    title: info.labels[LABEL_TITLE] ?? titleFromProgram(info.title),
    cwd: pathToFileURL(info.cwd).href,
    cols: info.cols,
    rows: info.rows,
    content: [],
    claim: claimFromLabel(info.labels[LABEL_CLAIM]),
    isPty: info.isPty,
    // An exited one is then told its exit as an action, which sets what each version reads of it.
    lifecycle: { status: "running" },
  };
  if (info.commandDetection) state.supportsCommandDetection = true;
  return state;
}

/** The exit a runner record reports, as the action. */
export function exitOf(info: RunnerTerminalInfo): TerminalAction {
  return info.signal ? { type: "terminal/exited", exitCode: info.exitCode, signal: info.signal } : { type: "terminal/exited", exitCode: info.exitCode };
}
