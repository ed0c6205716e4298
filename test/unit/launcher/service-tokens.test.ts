import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { prepareServiceTokens } from "../../../launcher/service-tokens.js";

describe("prepareServiceTokens", () => {
  it("writes tokens from the environment, or made up, to files only this account can read, and removes them", () => {
    const tokens = prepareServiceTokens({}, { RUNNER_TOKEN: "from-env" });
    expect(readFileSync(tokens.runnerTokenFile, "utf8")).toBe("from-env\n");
    expect(readFileSync(tokens.gatewayTokenFile, "utf8")).toMatch(/^[\w-]{32}\n$/);
    expect(statSync(tokens.runnerTokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(tokens.runnerTokenFile)).mode & 0o777).toBe(0o700);
    tokens.remove();
    expect(existsSync(tokens.runnerTokenFile)).toBe(false);
  });

  it("uses files it is given as they are, and leaves them in place", () => {
    const tokens = prepareServiceTokens({ gatewayTokenFile: "/given/gateway" }, { RUNNER_TOKEN_FILE: "/given/runner" });
    expect([tokens.runnerTokenFile, tokens.gatewayTokenFile]).toEqual(["/given/runner", "/given/gateway"]);
    tokens.remove();
  });
});
