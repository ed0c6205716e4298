import { describe, expect, it } from "vitest";
import { shapeClaim, shapeEnvelope, shapeRootState, shapeTerminalState } from "../../../ahp/shaping.js";
import type { TerminalState } from "../../../ahp/types.js";
import { featuresOf, MalformedVersionError, negotiateVersion } from "../../../ahp/versions.js";

const exited: TerminalState = {
  title: "sh",
  content: [],
  claim: { kind: "session", session: "ahp-session:/s", chat: "ahp-chat:/c", turnId: "t" },
  exitCode: 3,
  lifecycle: { status: "exited", exitCode: 3 },
  isPty: true,
};

describe("version negotiation", () => {
  it("picks the highest offered version it speaks, whatever the order, and returns it as offered", () => {
    expect(negotiateVersion(["1.0.0", "0.8.0", "0.9.0"])).toBe("1.0.0");
    expect(negotiateVersion(["0.5.1", "0.9.0"])).toBe("0.9.0");
    expect(negotiateVersion(["0.7.0"])).toBe("0.7.0");
    expect(negotiateVersion(["0.9.3", "1.5.0", "1.1.0"])).toBe("1.5.0");
    expect(negotiateVersion(["0.9.1"])).toBe("0.9.1");
    expect(negotiateVersion(["0.9.0", "0.10.0"])).toBe("0.10.0");
    expect(negotiateVersion(["0.10.0", "1.0.0"])).toBe("1.0.0");
  });

  it("finds nothing in an empty or unknown list; 0.5.1 to 0.8.0 match exactly only", () => {
    expect(negotiateVersion([])).toBeUndefined();
    expect(negotiateVersion(["999.0.0", "2.0.0", "0.11.0", "0.4.0"])).toBeUndefined();
    expect(negotiateVersion(["0.8.1", "0.6.1", "0.5.3"])).toBeUndefined();
    expect(negotiateVersion(["0.10.1"])).toBeUndefined();
  });

  it("refuses a malformed version, even beside one it speaks", () => {
    for (const bad of ["0.9", "01.0.0", "1.0.0-beta", "1.0.0+build", "1.0.0 ", "v1.0.0", 7, null]) {
      expect(() => negotiateVersion(["1.0.0", bad])).toThrow(MalformedVersionError);
    }
  });

  it("knows what each version adds", () => {
    const none = { authRequiredMetadata: false, tokenLifetime: false, historicalTerminals: false, windowedDelivery: false };
    expect(featuresOf("0.5.1")).toEqual({ isPty: false, lifecycle: false, claimChat: false, serverInfo: false, ...none });
    expect(featuresOf("0.5.2")).toMatchObject({ serverInfo: true, isPty: false });
    expect(featuresOf("0.7.0")).toMatchObject({ isPty: true, lifecycle: false });
    expect(featuresOf("0.9.0")).toEqual({ isPty: true, lifecycle: true, claimChat: true, serverInfo: true, ...none, authRequiredMetadata: true });
    expect(featuresOf("0.8.0")).toMatchObject({ authRequiredMetadata: true, lifecycle: false });
    expect(featuresOf("0.10.0")).toEqual(featuresOf("0.9.0"));
    expect(featuresOf("1.0.0")).toEqual({ ...featuresOf("0.9.0"), tokenLifetime: true, historicalTerminals: true });
    expect(featuresOf("1.1.0")).toEqual({ ...featuresOf("1.0.0"), windowedDelivery: true });
    expect(featuresOf("1.7.3")).toEqual(featuresOf("1.1.0"));
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
