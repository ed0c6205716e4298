import { Code, ConnectError } from "@connectrpc/connect";
import type { StateStore } from "../state/store.js";
import { OutputTap } from "./output-tap.js";
import type { TerminalLink } from "./terminal-link.js";

/** Most output bytes a resume reads from the runner: about the most a rendered screen carries (4 MiB); a client further behind takes the screen. */
export const MAX_RESUME_BYTES = 4 * 1024 * 1024;
/** The longest the runner may take to send the range: it is retained, so only a runner in trouble is slower. */
const RESUME_READ_TIMEOUT_MS = 10_000;

/** What a snapshot's `_meta` carries for a client that asked to resume from an offset (see docs/ahp.md). */
export interface ResumeMeta {
  resume?: { from: number; data: string };
  resumeUnavailable?: string;
}

/** Output read for a snapshot: `finish` gives the `_meta` for the snapshot taken in the same turn; `release` stops following the terminal. */
export interface FetchedResume {
  finish(): ResumeMeta;
  release(): void;
}

/**
 * Reads a terminal's output text from runner offset `from` to where its committed content ends (the
 * link's output offset), for a client that has everything before `from` and takes the snapshot
 * taken next (in the same turn as `finish` is called). Output committed meanwhile is appended, so
 * the text ends exactly where the snapshot's content does. A range retention no longer holds, a
 * clear in it, an offset past the content's end, more than MAX_RESUME_BYTES, or a runner that
 * fails gives the reason instead.
 */
export async function fetchResume(link: TerminalLink, store: StateStore, from: number): Promise<FetchedResume> {
  const end = link.outputOffset;
  if (from > end) return unavailable(`offset ${from} is past the end of the terminal's output (${end})`);
  if (end - from > MAX_RESUME_BYTES) return unavailable(`more than ${MAX_RESUME_BYTES} bytes of output came after offset ${from}`);
  const tap = new OutputTap(store, link.uri);
  let text: string;
  try {
    text = from === end ? "" : await readRange(link, from, end);
  } catch (err) {
    tap.release();
    return unavailable(err instanceof RangeUnavailable ? err.message : `the runner could not send the output: ${ConnectError.from(err).rawMessage}`);
  }
  const finish = (): ResumeMeta => {
    tap.release();
    if (tap.cleared) return { resumeUnavailable: "the terminal was cleared" };
    if (tap.overflowed) return { resumeUnavailable: "the output moved on faster than it was read" };
    return { resume: { from, data: text + tap.text.join("") } };
  };
  return { finish, release: tap.release };
}

/** A range of output the runner cannot give as it was. */
class RangeUnavailable extends Error {}

/** The text of the terminal's output between two offsets (whole characters at both ends), marks left out as in its content. */
async function readRange(link: TerminalLink, from: number, end: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  const request = { id: link.runnerId, fromOffset: BigInt(from), untilOffset: BigInt(end), follow: true, stripShellMarks: true };
  let reached = from;
  // A clear shows as a gap up to where it happened, then `cleared`: read on to tell it from eviction.
  let lost: string | undefined;
  try {
    for await (const { event } of link.runner.terminals.attach(request, { timeoutMs: RESUME_READ_TIMEOUT_MS })) {
      if (event.case === "gap") lost = `retention no longer holds offset ${from} (the runner's output now starts at ${event.value.toOffset})`;
      if (event.case === "cleared") throw new RangeUnavailable("the terminal was cleared");
      if (event.case === "exited") break;
      if (event.case !== "output") continue;
      reached = Number(event.value.endOffset);
      // A runner that does not stop at `untilOffset` (older than it) sends output past the end: it cannot be cut here.
      if (reached > end) throw new RangeUnavailable("the terminal's runner is too old to send a range of output");
      if (!lost) chunks.push(event.value.data);
      if (reached === end) break;
    }
  } catch (err) {
    if (ConnectError.from(err).code === Code.NotFound) throw new RangeUnavailable("the runner no longer has this terminal");
    throw err;
  }
  if (lost) throw new RangeUnavailable(lost);
  if (reached < end) throw new RangeUnavailable(`the runner's output ended at ${reached}, before ${end}`);
  return new TextDecoder("utf-8").decode(Buffer.concat(chunks));
}

function unavailable(reason: string): FetchedResume {
  return { finish: () => ({ resumeUnavailable: reason }), release: () => undefined };
}
