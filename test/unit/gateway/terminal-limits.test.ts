import { describe, expect, it } from "vitest";
import { MAX_URI_LENGTH, uriProblem } from "../../../gateway/terminals/terminal-names.js";
import { MAX_TITLE_LENGTH, titleProblem } from "../../../lib/titles.js";
import { TerminalQuota } from "../../../gateway/terminals/terminal-quota.js";

describe("terminal URIs and titles", () => {
  it("refuses controls, bidi and invisible characters, whitespace and length past the bound", () => {
    expect(uriProblem("ahp-terminal:/ok-%20-encoded")).toBeUndefined();
    expect(uriProblem(`x-a:${"x".repeat(MAX_URI_LENGTH - 4)}`)).toBeUndefined();
    expect(uriProblem(`x-a:${"x".repeat(MAX_URI_LENGTH - 3)}`)).toMatch(/at most 2048 characters, got 2049/);
    expect(uriProblem("ahp-terminal:/\u0000")).toMatch(/U\+0000/);
    expect(uriProblem("ahp-terminal:/\u0085")).toMatch(/U\+0085/);
    expect(uriProblem("ahp-terminal:/\u2066")).toMatch(/U\+2066/);
    expect(uriProblem("ahp-terminal:/\u00a0")).toMatch(/whitespace/);
    expect(uriProblem("ahp-terminal:/\u3000")).toMatch(/whitespace/);
    for (const invisible of ["\u200b", "\u200d", "\ufeff", "\u00ad", "\u2060"]) expect(uriProblem(`ahp-terminal:/ad${invisible}min`)).toMatch(/invisible/);
  });

  it("takes the schemes terminals use, and refuses the others", () => {
    for (const uri of ["ahp-terminal:/a", "AHP-Terminal:/b", "agenthost-terminal://e2e/c", "agenthost:/terminal/1", "x-mine:/d"]) expect(uriProblem(uri)).toBeUndefined();
    for (const uri of ["javascript:alert(1)", "http://evil.example/", "file:///etc/passwd", "data:text/html,x", "ahp-session:/s", "ahp-root://"]) {
      expect(uriProblem(uri)).toMatch(/scheme does not name terminals/);
    }
    expect(uriProblem("no-scheme-here")).toMatch(/needs a scheme/);
  });

  it("keeps titles to 4 KiB without controls", () => {
    expect(titleProblem("a title with spaces and é")).toBeUndefined();
    expect(titleProblem("t".repeat(MAX_TITLE_LENGTH + 1))).toMatch(/at most 4096/);
    expect(titleProblem("\u001b]0;x\u0007")).toMatch(/U\+001B/);
  });
});

describe("TerminalQuota", () => {
  const open = new Set<string>();
  const quota = new TerminalQuota({ perConnection: 2, perUser: 3 }, (uri) => open.has(uri));
  const a = {};
  const b = {};

  it("counts terminals per connection and per person, pending ones included, and frees closed or failed ones", () => {
    const take = (uri: string, connection: object, user = "ana") => {
      const slot = quota.take(uri, { connection, user });
      if (typeof slot === "string") return slot;
      return { created: () => (open.add(uri), slot.created()), failed: () => slot.failed() };
    };
    const first = take("t:1", a);
    const second = take("t:2", a);
    // Both still pending (the runner has not answered): a third on the same connection is refused already.
    expect(take("t:3", a)).toMatch(/this connection has 2 terminals open/);
    if (typeof first === "string" || typeof second === "string") throw new Error("refused");
    first.created();
    second.failed();
    const third = take("t:3", b);
    if (typeof third === "string") throw new Error(third);
    third.created();
    const fourth = take("t:4", a);
    if (typeof fourth === "string") throw new Error(fourth);
    fourth.created();
    expect(take("t:5", b)).toMatch(/ana has 3 terminals open/);
    expect(typeof take("t:5", b, "sam")).toBe("object");
    open.delete("t:1");
    expect(typeof take("t:6", {})).toBe("object");
  });
});

describe("TerminalQuota over several gateways", () => {
  it("counts a person's terminals the runners record (made through any gateway) against the per-person limit", () => {
    const recorded = new Map([["ana", 2]]);
    const quota = new TerminalQuota({ perConnection: 10, perUser: 3 }, () => true, (user) => recorded.get(user) ?? 0);
    const slot = quota.take("t:here", { connection: {}, user: "ana" });
    if (typeof slot === "string") throw new Error(slot);
    // Pending here, two recorded elsewhere: the third is the last.
    expect(quota.take("t:more", { connection: {}, user: "ana" })).toMatch(/ana has 3 terminals open/);
    slot.created();
    recorded.set("ana", 3);
    expect(quota.take("t:more", { connection: {}, user: "ana" })).toMatch(/ana has 3 terminals open/);
    recorded.set("ana", 1);
    expect(typeof quota.take("t:more", { connection: {}, user: "ana" })).toBe("object");
  });
});
