import { describe, expect, it } from "vitest";
import { shapeClaim, shapeEnvelope, shapeRootState, shapeTerminalState } from "../../../ahp/shaping.js";
import type { TerminalState } from "../../../ahp/types.js";
import { featuresOf, negotiateVersion } from "../../../ahp/versions.js";

const exited: TerminalState = {
  title: "sh",
  content: [],
  claim: { kind: "session", session: "ahp-session:/s", chat: "ahp-chat:/c", turnId: "t" },
  exitCode: 3,
  lifecycle: { status: "exited", exitCode: 3 },
  isPty: true,
};

describe("version negotiation", () => {
  it("picks the first offered version it speaks, in the client's order", () => {
    expect(negotiateVersion(["1.0.0", "0.8.0", "0.9.0"])).toBe("0.8.0");
    expect(negotiateVersion(["0.5.1", "0.9.0"])).toBe("0.5.1");
    expect(negotiateVersion(["0.7.0"])).toBe("0.7.0");
  });

  it("finds nothing in an empty or unknown list", () => {
    expect(negotiateVersion([])).toBeUndefined();
    expect(negotiateVersion(["999.0.0", 7, null])).toBeUndefined();
  });

  it("knows what each version adds", () => {
    expect(featuresOf("0.5.1")).toEqual({ isPty: false, lifecycle: false, claimChat: false, serverInfo: false });
    expect(featuresOf("0.5.2")).toMatchObject({ serverInfo: true, isPty: false });
    expect(featuresOf("0.7.0")).toMatchObject({ isPty: true, lifecycle: false });
    expect(featuresOf("0.9.0")).toEqual({ isPty: true, lifecycle: true, claimChat: true, serverInfo: true });
  });
});

describe("shaping per version", () => {
  it("gives pre-0.7 peers the flat exitCode only, and no chat in session claims", () => {
    const shaped = shapeTerminalState(exited, featuresOf("0.6.0"));
    expect(shaped).toEqual({ title: "sh", content: [], claim: { kind: "session", session: "ahp-session:/s", turnId: "t" }, exitCode: 3 });
  });

  it("adds isPty for 0.7 and 0.8", () => {
    expect(shapeTerminalState(exited, featuresOf("0.8.0"))).toMatchObject({ isPty: true, exitCode: 3 });
    expect(shapeTerminalState(exited, featuresOf("0.8.0"))).not.toHaveProperty("lifecycle");
  });

  it("gives 0.9 peers lifecycle (running when none is known), the flat exitCode beside it, and chat", () => {
    expect(shapeTerminalState(exited, featuresOf("0.9.0"))).toMatchObject({ lifecycle: { status: "exited", exitCode: 3 }, exitCode: 3, claim: { chat: "ahp-chat:/c" } });
    const running = shapeTerminalState({ title: "sh", content: [], claim: { kind: "client", clientId: "c" } }, featuresOf("0.9.0"));
    expect(running.lifecycle).toEqual({ status: "running" });
  });

  it("fills chat for 0.9 peers when a pre-0.9 peer claimed without one", () => {
    expect(shapeClaim({ kind: "session", session: "ahp-session:/s" }, featuresOf("0.9.0"))).toEqual({ kind: "session", session: "ahp-session:/s", chat: "ahp-session:/s" });
  });

  it("shapes root lists and claim envelopes, and leaves output envelopes alone", () => {
    const root = shapeRootState({ agents: [], terminals: [{ resource: "r", title: "t", claim: exited.claim, exitCode: 1, lifecycle: { status: "exited", exitCode: 1 } }] }, featuresOf("0.5.1"));
    expect(root.terminals![0]).toEqual({ resource: "r", title: "t", claim: { kind: "session", session: "ahp-session:/s", turnId: "t" }, exitCode: 1 });
    const claimed = shapeEnvelope({ channel: "c", serverSeq: 1, action: { type: "terminal/claimed", claim: exited.claim } }, featuresOf("0.6.0"));
    expect(claimed.action).toEqual({ type: "terminal/claimed", claim: { kind: "session", session: "ahp-session:/s", turnId: "t" } });
    const data = { channel: "c", serverSeq: 2, action: { type: "terminal/data" as const, data: "x" } };
    expect(shapeEnvelope(data, featuresOf("0.6.0"))).toBe(data);
  });
});
