import type { TerminalContentPart, TerminalState } from "./types.js";

/**
 * The terminal channel's reducer, as clients run it: it must give the same state for the same
 * actions (the official reducer fixtures pin it). Unknown action types change nothing. `exited`
 * writes the flat `exitCode` and, on state that carries `lifecycle`, the 0.9 lifecycle too.
 */
export function terminalReducer(state: TerminalState, action: { type: string; [key: string]: unknown }): TerminalState {
  switch (action.type) {
    case "terminal/data":
      return { ...state, content: appendData(state.content, action.data as string) };
    case "terminal/resized":
      return { ...state, cols: action.cols as number, rows: action.rows as number };
    case "terminal/claimed":
      return { ...state, claim: action.claim as TerminalState["claim"] };
    case "terminal/titleChanged":
      return { ...state, title: action.title as string };
    case "terminal/cwdChanged":
      return { ...state, cwd: action.cwd as string };
    case "terminal/exited": {
      const exitCode = action.exitCode as number | undefined;
      const next: TerminalState = { ...state };
      if (exitCode === undefined) delete next.exitCode;
      else next.exitCode = exitCode;
      if (state.lifecycle) next.lifecycle = exitCode === undefined ? { status: "exited" } : { status: "exited", exitCode };
      return next;
    }
    case "terminal/cleared":
      return { ...state, content: [] };
    case "terminal/commandDetectionAvailable":
      return { ...state, supportsCommandDetection: true };
    case "terminal/commandExecuted":
      return {
        ...state,
        supportsCommandDetection: true,
        content: [
          ...state.content,
          {
            type: "command",
            commandId: action.commandId as string,
            commandLine: action.commandLine as string,
            output: "",
            timestamp: action.timestamp as number,
            isComplete: false,
          },
        ],
      };
    case "terminal/commandFinished":
      return { ...state, content: state.content.map((part) => finishCommand(part, action)) };
    default:
      return state;
  }
}

/** True when output goes on in this part (the content's last): unclassified output, or a command still running; otherwise output opens a new part. */
export function takesOutput(part: TerminalContentPart | undefined): boolean {
  return part !== undefined && (part.type === "unclassified" || (part.type === "command" && !part.isComplete));
}

function appendData(content: TerminalContentPart[], data: string): TerminalContentPart[] {
  const last = content.at(-1);
  if (!takesOutput(last)) return [...content, { type: "unclassified", value: data }];
  const part = last!;
  return [...content.slice(0, -1), part.type === "command" ? { ...part, output: part.output + data } : { ...part, value: part.value + data }];
}

function finishCommand(part: TerminalContentPart, action: { [key: string]: unknown }): TerminalContentPart {
  if (part.type !== "command" || part.commandId !== action.commandId) return part;
  const finished = { ...part, isComplete: true };
  if (action.exitCode !== undefined) finished.exitCode = action.exitCode as number;
  if (action.durationMs !== undefined) finished.durationMs = action.durationMs as number;
  return finished;
}
