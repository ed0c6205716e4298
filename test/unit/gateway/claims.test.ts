import { describe, expect, it } from "vitest";
import { parseClaim, sameClaim } from "../../../ahp/claims.js";
import { claimChangeRefusal } from "../../../gateway/terminals/claim-policy.js";

describe("parseClaim", () => {
  it("reads client and session claims, dropping unknown keys", () => {
    expect(parseClaim({ kind: "client", clientId: "c1", extra: 1 }, { requireChat: false })).toEqual({ kind: "client", clientId: "c1" });
    expect(parseClaim({ kind: "session", session: "s", turnId: "t", toolCallId: "tc", x: 2 }, { requireChat: false })).toEqual({
      kind: "session",
      session: "s",
      turnId: "t",
      toolCallId: "tc",
    });
  });

  it("requires chat in session claims only from 0.9 peers", () => {
    expect(parseClaim({ kind: "session", session: "s" }, { requireChat: false })).toEqual({ kind: "session", session: "s" });
    expect(() => parseClaim({ kind: "session", session: "s" }, { requireChat: true })).toThrow(/chat/);
    expect(parseClaim({ kind: "session", session: "s", chat: "c" }, { requireChat: true })).toMatchObject({ chat: "c" });
  });

  it("refuses anything that is neither kind, or malformed", () => {
    const bad = [null, "client", [], {}, { kind: "agent" }, { kind: "client" }, { kind: "client", clientId: "" }, { kind: "session" }, { kind: "session", session: "s", turnId: 5 }];
    for (const claim of bad) expect(() => parseClaim(claim, { requireChat: false })).toThrow();
  });

  it("compares claims by holder and scope", () => {
    expect(sameClaim({ kind: "client", clientId: "a" }, { kind: "client", clientId: "a" })).toBe(true);
    expect(sameClaim({ kind: "session", session: "s" }, { kind: "session", session: "s", turnId: "t" })).toBe(false);
  });
});

describe("who may change a claim", () => {
  it("lets the holding client hand the terminal to anyone", () => {
    expect(claimChangeRefusal({ kind: "client", clientId: "a" }, { kind: "session", session: "s" }, "a")).toBeUndefined();
    expect(claimChangeRefusal({ kind: "client", clientId: "a" }, { kind: "client", clientId: "b" }, "a")).toBeUndefined();
  });

  it("refuses anyone else a client's terminal", () => {
    expect(claimChangeRefusal({ kind: "client", clientId: "a" }, { kind: "client", clientId: "b" }, "b")).toMatch(/held by client a/);
  });

  it("lets anyone rescope a session claim within that session, and nothing more", () => {
    const held = { kind: "session" as const, session: "s", chat: "c", turnId: "t", toolCallId: "tc" };
    expect(claimChangeRefusal(held, { kind: "session", session: "s", chat: "c" }, "x")).toBeUndefined();
    expect(claimChangeRefusal(held, { kind: "session", session: "s", chat: "c", turnId: "t2", toolCallId: "tc2" }, "x")).toBeUndefined();
    expect(claimChangeRefusal(held, { kind: "session", session: "other" }, "x")).toMatch(/held by session s/);
    expect(claimChangeRefusal(held, { kind: "session", session: "s", chat: "other-chat" }, "x")).toMatch(/rescoped/);
    expect(claimChangeRefusal(held, { kind: "client", clientId: "x" }, "x")).toMatch(/rescoped/);
  });
});
