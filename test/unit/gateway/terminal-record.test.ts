import { describe, expect, it } from "vitest";
import { terminalReducer } from "../../../ahp/terminal-reducer.js";
import type { TerminalAction, TerminalState } from "../../../ahp/types.js";
import type { Runner } from "../../../gateway/runners/runner-client.js";
import { TerminalRecord } from "../../../gateway/state/terminal-record.js";
import { TEXT_BLOCK_BYTES, TextBlocks } from "../../../gateway/state/text-blocks.js";
import { TerminalLink } from "../../../gateway/terminals/terminal-link.js";
import { createLogger } from "../../../lib/logger.js";

const initial: TerminalState = { title: "sh", content: [], claim: { kind: "client", clientId: "c" }, lifecycle: { status: "running" } };
/** Never called: these tests only apply actions and queue effects. */
const runner = { url: "http://runner.invalid", terminals: {} } as unknown as Runner;
const log = createLogger("silent", "test");
/** What the slow effect takes (a fake of a runner call that is slow). */
const SLOW_EFFECT_MS = 20;
const text = (state: TerminalState): string => state.content.map((part) => (part.type === "command" ? part.output : part.value)).join("");

describe("TerminalRecord", () => {
  it("caps content at the scrollback size, dropping the oldest characters", () => {
    const terminal = new TerminalRecord("u", initial, 1000, new TextBlocks());
    let all = "";
    for (let i = 0; i < 100; i++) {
      const chunk = `line ${i} ${"x".repeat(30)}\n`;
      all += chunk;
      terminal.apply({ type: "terminal/data", data: chunk });
      expect(text(terminal.state).length).toBeLessThanOrEqual(1000);
    }
    expect(all.endsWith(text(terminal.state))).toBe(true);
    expect(text(terminal.state).length).toBeGreaterThanOrEqual(900);
  });

  it("never leaves half a surrogate pair at the front", () => {
    const terminal = new TerminalRecord("u", initial, 1000, new TextBlocks());
    terminal.apply({ type: "terminal/data", data: "😀".repeat(600) });
    expect(text(terminal.state).charCodeAt(0)).toBe(0xd83d);
  });

  it("keeps a line longer than the cap's slack whole when it fits", () => {
    const terminal = new TerminalRecord("u", initial, 200_000, new TextBlocks());
    terminal.apply({ type: "terminal/data", data: "y".repeat(40_000) });
    expect(text(terminal.state)).toBe("y".repeat(40_000));
  });

  it("is running until exited, and lists itself with its exit code", () => {
    const terminal = new TerminalRecord("u", initial, 1000, new TextBlocks());
    expect(terminal.running).toBe(true);
    terminal.apply({ type: "terminal/exited", exitCode: 0 });
    expect(terminal.running).toBe(false);
    expect(terminal.row()).toEqual({ resource: "u", title: "sh", claim: initial.claim, exitCode: 0, lifecycle: { status: "exited", exitCode: 0 } });
  });

  it("gives its scrollback's blocks back when trimmed and cleared, but not the content another record took", () => {
    const blocks = new TextBlocks();
    const chunk = "z".repeat(TEXT_BLOCK_BYTES);
    const terminal = new TerminalRecord("u", initial, 4 * TEXT_BLOCK_BYTES, blocks);
    for (let i = 0; i < 6; i++) terminal.apply({ type: "terminal/data", data: chunk });
    // Trimmed to 90 % of the cap: what was cut from the front went back.
    expect(blocks.freeCount).toBeGreaterThanOrEqual(1);
    terminal.clearContent();
    const afterClear = blocks.freeCount;
    expect(afterClear).toBeGreaterThanOrEqual(5);
    terminal.apply({ type: "terminal/data", data: chunk });
    const moved = terminal.withRowOf(new TerminalRecord("u", initial, 1000, blocks), false);
    expect(text(terminal.state)).toBe("");
    terminal.clearContent();
    expect(blocks.freeCount).toBe(afterClear - 1);
    expect(text(moved.state)).toBe(chunk);
    moved.clearContent();
    expect([blocks.freeCount, text(moved.state)]).toEqual([afterClear, ""]);
  });

});

describe("TerminalLink", () => {
  it("runs queued effects in order, and keeps going after one fails", async () => {
    const terminal = new TerminalLink("u", runner, "r", false, log);
    const order: string[] = [];
    const errors: unknown[] = [];
    void terminal.queue(async () => {
      // Slow enough that the effects queued after it would finish first, were they not queued.
      await new Promise((resolve) => setTimeout(resolve, SLOW_EFFECT_MS));
      order.push("slow");
    }, (err) => errors.push(err));
    void terminal.queue(() => Promise.reject(new Error("boom")), (err) => errors.push(err));
    await terminal.queue(async () => order.push("fast"), (err) => errors.push(err));
    expect(order).toEqual(["slow", "fast"]);
    expect(errors).toHaveLength(1);
  });
});

describe("TerminalRecord against the plain reducer", () => {
  /** A run of output, commands and a clear, as a shell with integration produces them. */
  function actions(seed: number): TerminalAction[] {
    let state = seed;
    const random = (n: number): number => ((state = (state * 1103515245 + 12345) % 2 ** 31), state % n);
    const list: TerminalAction[] = [];
    let command = 0;
    for (let i = 0; i < 400; i++) {
      const pick = random(20);
      if (pick < 14) list.push({ type: "terminal/data", data: `chunk ${i} ${"é😀x".repeat(random(40))}\r\n` });
      else if (pick < 17) list.push({ type: "terminal/commandExecuted", commandId: `cmd-${++command}`, commandLine: "ls", timestamp: i });
      else if (pick < 19) list.push({ type: "terminal/commandFinished", commandId: `cmd-${command}`, exitCode: 0, durationMs: 1 });
      else if (random(10) === 0) list.push({ type: "terminal/cleared" });
      else list.push({ type: "terminal/resized", cols: 80 + random(5), rows: 24 });
    }
    return list;
  }

  it("gives the reducer's state exactly while under the cap", () => {
    for (const seed of [1, 2, 3]) {
      const record = new TerminalRecord("u", initial, 10_000_000, new TextBlocks());
      let expected = initial;
      for (const action of actions(seed)) {
        record.apply(action);
        expected = terminalReducer(expected, action);
      }
      expect(record.state).toEqual(expected);
    }
  });

  it("keeps the newest characters of the reducer's content when trimming, never half a character", () => {
    for (const seed of [4, 5, 6]) {
      const record = new TerminalRecord("u", initial, 2_000, new TextBlocks());
      let expected = initial;
      for (const action of actions(seed)) {
        record.apply(action);
        expected = terminalReducer(expected, action);
        const kept = text(record.state);
        expect(kept.length).toBeLessThanOrEqual(2_000);
        expect(text(expected).endsWith(kept)).toBe(true);
        expect(/^[\udc00-\udfff]/.test(kept)).toBe(false);
      }
    }
  });
});
