import { describe, expect, it } from "vitest";
import type { TerminalState } from "../../../ahp/types.js";
import type { Runner } from "../../../gateway/runners/runner-client.js";
import { TerminalRecord } from "../../../gateway/state/terminal-record.js";
import { TerminalLink } from "../../../gateway/terminals/terminal-link.js";
import { createLogger } from "../../../lib/logger.js";

const initial: TerminalState = { title: "sh", content: [], claim: { kind: "client", clientId: "c" }, lifecycle: { status: "running" } };
/** Never called: these tests only apply actions and queue effects. */
const runner = { url: "http://runner.invalid", terminals: {} } as unknown as Runner;
const log = createLogger("silent", "test");
const text = (state: TerminalState): string => state.content.map((part) => (part.type === "command" ? part.output : part.value)).join("");

describe("TerminalRecord", () => {
  it("caps content at the scrollback size, dropping the oldest characters", () => {
    const terminal = new TerminalRecord("u", initial, 1000);
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
    const terminal = new TerminalRecord("u", initial, 1000);
    terminal.apply({ type: "terminal/data", data: "😀".repeat(600) });
    expect(text(terminal.state).charCodeAt(0)).toBe(0xd83d);
  });

  it("keeps a line longer than the cap's slack whole when it fits", () => {
    const terminal = new TerminalRecord("u", initial, 200_000);
    terminal.apply({ type: "terminal/data", data: "y".repeat(40_000) });
    expect(text(terminal.state)).toBe("y".repeat(40_000));
  });

  it("is running until exited, and lists itself with its exit code", () => {
    const terminal = new TerminalRecord("u", initial, 1000);
    expect(terminal.running).toBe(true);
    terminal.apply({ type: "terminal/exited", exitCode: 0 });
    expect(terminal.running).toBe(false);
    expect(terminal.row()).toEqual({ resource: "u", title: "sh", claim: initial.claim, exitCode: 0, lifecycle: { status: "exited", exitCode: 0 } });
  });

});

describe("TerminalLink", () => {
  it("runs queued effects in order, and keeps going after one fails", async () => {
    const terminal = new TerminalLink("u", runner, "r", false, log);
    const order: string[] = [];
    const errors: unknown[] = [];
    void terminal.queue(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push("slow");
    }, (err) => errors.push(err));
    void terminal.queue(() => Promise.reject(new Error("boom")), (err) => errors.push(err));
    await terminal.queue(async () => order.push("fast"), (err) => errors.push(err));
    expect(order).toEqual(["slow", "fast"]);
    expect(errors).toHaveLength(1);
  });
});
