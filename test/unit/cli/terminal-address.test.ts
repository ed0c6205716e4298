import { describe, expect, it } from "vitest";
import { terminalNamed, type TerminalRow } from "../../../cli/terminal-address.js";

const row = (resource: string, title: string): TerminalRow => ({ resource, title, claim: { kind: "client", clientId: "c" } });
const rows = [
  row("ahp-terminal:/b12cf60c-85c7", "build"),
  row("ahp-terminal:/b12d0000-0000", "logs"),
  row("ahp-terminal:/77aa0000-0000", "b12c"),
  row("agenthost-terminal://e2e/9f00", "twin"),
  row("ahp-terminal:/9f01", "twin"),
];

describe("a terminal named on ahp-term's command line", () => {
  it("is found by its URI, its title, or a unique prefix of its URI, with or without the scheme", () => {
    expect(terminalNamed("ahp-terminal:/b12d0000-0000", rows)).toBe("ahp-terminal:/b12d0000-0000");
    expect(terminalNamed("build", rows)).toBe("ahp-terminal:/b12cf60c-85c7");
    expect(terminalNamed("ahp-terminal:/b12cf", rows)).toBe("ahp-terminal:/b12cf60c-85c7");
    expect(terminalNamed("b12d", rows)).toBe("ahp-terminal:/b12d0000-0000");
    expect(terminalNamed("e2e/9f", rows)).toBe("agenthost-terminal://e2e/9f00");
    // A title wins over a prefix it also is.
    expect(terminalNamed("b12c", rows)).toBe("ahp-terminal:/77aa0000-0000");
  });

  it("is an error listing the terminals a name fits when it fits several; one that fits none is passed on for the gateway to answer", () => {
    expect(() => terminalNamed("b12", rows)).toThrow('"b12" names 2 terminals; give more of the URI:\n  ahp-terminal:/b12cf60c-85c7\tbuild\n  ahp-terminal:/b12d0000-0000\tlogs');
    expect(() => terminalNamed("twin", rows)).toThrow(/names 2 terminals/);
    expect(terminalNamed("ahp-terminal:/released", rows)).toBe("ahp-terminal:/released");
  });
});
