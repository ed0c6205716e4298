/** Largest width or height a client may ask for (the runner's own limit). */
export const MAX_TERMINAL_DIMENSION = 2000;

/** True for a width or height a terminal may have: an integer from 1 to MAX_TERMINAL_DIMENSION. */
export function isTerminalDimension(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_TERMINAL_DIMENSION;
}
