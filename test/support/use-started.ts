import { afterAll, beforeAll } from "vitest";

/**
 * Starts something real once for the tests around the call (a file, or the `describe` it is called in)
 * and stops it after them: registers `beforeAll(start)` and `afterAll(stop)`, and returns a stand-in
 * that reads and writes through to what `start` resolved with. Using the stand-in outside those tests
 * (at the top level of a file, or after `afterAll`) throws, naming what was not started.
 */
export function useStarted<T extends object>(what: string, start: () => Promise<T>, stop: (started: T) => Promise<unknown>): T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    const stopping = started;
    started = undefined;
    if (stopping) await stop(stopping);
  });
  const current = (): T => {
    if (!started) throw new Error(`${what} is used outside the tests it was started for (before beforeAll or after afterAll)`);
    return started;
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(current(), key),
    set: (_, key, value) => Reflect.set(current(), key, value),
    has: (_, key) => Reflect.has(current(), key),
  });
}
