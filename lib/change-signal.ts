/**
 * A promise that settles at the next change, renewed at each: readers take `next()` before they look,
 * so a change between looking and waiting is never missed.
 */
export class ChangeSignal {
  private current = settleable();

  /** Resolves at the next `fire()`. */
  next(): Promise<void> {
    return this.current.promise;
  }

  /** Wakes everyone waiting, and starts the wait for the change after. */
  fire(): void {
    const { resolve } = this.current;
    this.current = settleable();
    resolve();
  }
}

function settleable(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}
