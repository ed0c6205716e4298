import { timingSafeEqual } from "node:crypto";

/** True when two secrets are equal, compared in constant time (a length mismatch answers at once). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
