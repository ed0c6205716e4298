import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rootReducer } from "../../ahp/root-reducer.js";
import { terminalReducer } from "../../ahp/terminal-reducer.js";

const DIR = join(import.meta.dirname, "fixtures/0.6.0/test-cases/reducers");

interface ReducerFixture {
  description: string;
  reducer: "terminal" | "root";
  initial: any;
  actions: Array<{ type: string; [key: string]: unknown }>;
  expected: unknown;
}

const fixtures = readdirSync(DIR)
  .filter((name) => name.endsWith(".json"))
  .map((name) => ({ name, fixture: JSON.parse(readFileSync(join(DIR, name), "utf8")) as ReducerFixture }));

describe("official reducer fixtures (protocol 0.6.0)", () => {
  it("has every terminal and root fixture to run", () => {
    expect(fixtures.length).toBe(24);
  });

  it.each(fixtures)("$name", ({ fixture }) => {
    const reduce = fixture.reducer === "terminal" ? terminalReducer : rootReducer;
    const initial = structuredClone(fixture.initial);
    const state = fixture.actions.reduce((current, action) => reduce(current, action), fixture.initial);
    expect(state).toEqual(fixture.expected);
    // Reducers return new state; they never mutate what they were given.
    expect(fixture.initial).toEqual(initial);
  });
});

describe("the 0.9 lifecycle", () => {
  it("records exited in lifecycle on state that carries one, beside the flat exitCode", () => {
    const running = { title: "sh", content: [], claim: { kind: "client" as const, clientId: "c" }, lifecycle: { status: "running" as const } };
    expect(terminalReducer(running, { type: "terminal/exited", exitCode: 2 })).toMatchObject({ exitCode: 2, lifecycle: { status: "exited", exitCode: 2 } });
    expect(terminalReducer(running, { type: "terminal/exited" }).lifecycle).toEqual({ status: "exited" });
  });
});
