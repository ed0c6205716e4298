import { Code, ConnectError } from "@connectrpc/connect";
import type { TerminalState } from "../../ahp/types.js";
import type { StateStore } from "../state/store.js";
import { OutputTap } from "./output-tap.js";
import type { TerminalLink } from "./terminal-link.js";

/** Lines of scrollback above the screen a client gets: enough to scroll back through a few screens, small next to the 4 MiB the runner allows a rendering. */
export const SCREEN_SCROLLBACK_LINES = 1_000;
/** Renderings tried when the terminal's size changes while one is made: a program resized again and again leaves the client with the transcript. */
const MAX_ATTEMPTS = 3;

/** A terminal's screen as a snapshot's `_meta` carries it (see docs/ahp.md). */
export interface ScreenMeta {
  screen?: { data: string; cols: number; rows: number; commands: Array<{ commandId: string; line: number; exitCode?: number }> };
  screenUnavailable?: string;
}

/** A rendered screen waiting for its snapshot: `finish` gives the `_meta` for the snapshot of `state`; `release` stops following the terminal. */
export interface CapturedScreen {
  finish(state: TerminalState): ScreenMeta;
  release(): void;
}

/**
 * Renders a terminal's screen where its committed output ends, for the snapshot taken next (in the
 * same turn as `finish` is called). Output committed while the runner rendered and until then is
 * appended to the screen's data, so the screen stands exactly where the snapshot's content ends; a
 * size change or clear while rendering starts over, one after it gives up.
 */
export async function captureScreen(link: TerminalLink, store: StateStore): Promise<CapturedScreen> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const tap = new OutputTap(store, link.uri);
    const { release } = tap;
    const changed = (): boolean => tap.resized || tap.cleared;
    let rendered;
    try {
      rendered = await link.runner.terminals.getScreen({ id: link.runnerId, endOffset: BigInt(link.outputOffset), scrollbackLines: SCREEN_SCROLLBACK_LINES, eventsAtEnd: true });
    } catch (err) {
      release();
      return unavailable(unavailableReason(err));
    }
    if (changed()) {
      release();
      continue;
    }
    const { data, cols, rows, commands } = rendered;
    const finish = (state: TerminalState): ScreenMeta => {
      release();
      if (changed() || state.cols !== cols || state.rows !== rows) return { screenUnavailable: RESIZED };
      if (tap.overflowed) return { screenUnavailable: "the output moved on faster than the screen was rendered" };
      const placed = commands.map(({ commandId, line, exitCode }) => (exitCode === undefined ? { commandId, line } : { commandId, line, exitCode }));
      return { screen: { data: data + tap.text.join(""), cols, rows, commands: placed } };
    };
    return { finish, release };
  }
  return unavailable(RESIZED);
}

const RESIZED = "the terminal was resized while its screen was rendered";

function unavailable(reason: string): CapturedScreen {
  return { finish: () => ({ screenUnavailable: reason }), release: () => undefined };
}

/** Why the runner gave no screen, in a few words for the client. */
function unavailableReason(err: unknown): string {
  const error = ConnectError.from(err);
  switch (error.code) {
    case Code.FailedPrecondition:
      return `retention no longer holds the terminal's start: ${error.rawMessage}`;
    case Code.Unimplemented:
      return "the terminal's runner is too old to render screens";
    case Code.NotFound:
      return "the runner no longer has this terminal";
    default:
      return `the runner could not render the screen: ${error.rawMessage}`;
  }
}
