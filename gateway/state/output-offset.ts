import type { ActionEnvelope } from "../../ahp/types.js";

/** Where an output envelope's runner offset is kept: a symbol, so JSON.stringify (every shared frame) leaves it out. */
const OUTPUT_OFFSET = Symbol("outputOffset");

type Marked = ActionEnvelope & { [OUTPUT_OFFSET]?: number };

/** Marks a `terminal/data` envelope with the runner offset its terminal's text ends at after it. */
export function markOutputOffset(envelope: ActionEnvelope, offset: number): void {
  (envelope as Marked)[OUTPUT_OFFSET] = offset;
}

/** The runner offset an output envelope ends at (copies made with spread keep it), or undefined when it carries none. */
export function outputOffsetOf(envelope: ActionEnvelope): number | undefined {
  return (envelope as Marked)[OUTPUT_OFFSET];
}
