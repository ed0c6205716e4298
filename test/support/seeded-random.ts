/** A repeatable stream of numbers in [0, 1) from `seed` (a linear congruential generator): seeded tests see the same inputs on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}
