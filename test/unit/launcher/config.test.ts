import { describe, expect, it } from "vitest";
import { parseStartConfig } from "../../../launcher/config.js";

describe("parseStartConfig", () => {
  it("has the documented defaults, and hands each child the log level first", () => {
    expect(parseStartConfig([])).toEqual({
      logLevel: "info",
      host: "127.0.0.1",
      port: 7071,
      runnerPort: 7070,
      tokenFile: undefined,
      runnerTokenFile: undefined,
      runnerArgs: ["--log-level", "info"],
      gatewayArgs: ["--log-level", "info"],
      help: false,
    });
  });

  it("takes --log-level for itself and both children; a child's own level, given after it, wins there", () => {
    const config = parseStartConfig(["--log-level", "debug", "--gateway.log-level", "warn", "--users", "u.json"]);
    expect(config.logLevel).toBe("debug");
    expect(config.runnerArgs).toEqual(["--log-level", "debug"]);
    expect(config.gatewayArgs).toEqual(["--log-level", "debug", "--log-level", "warn", "--users", "u.json"]);
    expect(() => parseStartConfig(["--log-level", "loud"])).toThrow(/--log-level must be one of fatal, error/);
  });

  it("sets whether the gateway requires its runner itself", () => {
    expect(() => parseStartConfig(["--require-runner"])).toThrow(/npm start sets the gateway's --require-runner itself/);
    expect(() => parseStartConfig(["--port", "65536"])).toThrow(/--port must be an integer from 0 to 65535/);
  });
});
