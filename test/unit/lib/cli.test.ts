import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { debugAsked, PACKAGE_VERSION, versionAsked } from "../../../lib/cli.js";

describe("versionAsked", () => {
  it("finds --version among the flags", () => {
    expect(versionAsked(["--version"])).toBe(true);
    expect(versionAsked(["--port", "0", "--version"])).toBe(true);
    expect(versionAsked(["--port", "0"])).toBe(false);
    expect(versionAsked(["--versions"])).toBe(false);
  });

  it("leaves a command's own words after -- alone", () => {
    expect(versionAsked(["run", "--", "node", "--version"])).toBe(false);
  });

  it("reads the version from package.json", () => {
    expect(PACKAGE_VERSION).toBe((JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version);
    expect(PACKAGE_VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("debugAsked", () => {
  it("is true for --log-level debug or trace, in either spelling, the last one counting", () => {
    expect(debugAsked(["--log-level", "debug"])).toBe(true);
    expect(debugAsked(["--port", "0", "--log-level=trace"])).toBe(true);
    expect(debugAsked(["--log-level", "debug", "--log-level", "info"])).toBe(false);
    expect(debugAsked(["--port", "0"])).toBe(false);
    expect(debugAsked(["run", "--", "tool", "--log-level", "debug"])).toBe(false);
  });
});
