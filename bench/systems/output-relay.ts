import type { Terminal } from "./terminal-system.js";

/**
 * Output of one terminal fanned out to the bench's listeners. Text that arrives before the first
 * listener is kept for it: a peer may send its first prompt before the bench has its terminal.
 */
export class OutputRelay {
  private readonly listeners: Array<(text: string) => void> = [];
  private early: string[] = [];
  private arrived!: () => void;
  readonly firstOutput = new Promise<void>((done) => (this.arrived = done));

  /** Output arrived that the listeners are not handed (a snapshot taken before they were listening). */
  arrivedUnseen(): void {
    this.arrived();
  }

  push(text: string): void {
    if (text.length === 0) return;
    this.arrived();
    if (this.listeners.length === 0) {
      this.early.push(text);
      return;
    }
    for (const listener of this.listeners) listener(text);
  }

  readonly output: Terminal["output"] = (listener) => {
    this.listeners.push(listener);
    if (this.listeners.length > 1) return;
    const early = this.early;
    this.early = [];
    for (const text of early) listener(text);
  };
}
