import { describe, expect, it } from "vitest";
import { GATEWAY_FLAGS } from "../../../gateway/config.js";
import { routeFlags, type Children } from "../../../launcher/flag-routing.js";
import { RUNNER_FLAGS } from "../../../services/runner/config.js";

const own = { port: { type: "string" }, help: { type: "boolean" } } as const;
const children: Children = {
  runner: { flags: { "allow-run-as": { type: "boolean" }, "metrics-port": { type: "string" }, token: { type: "string" } }, managed: ["token"] },
  gateway: { flags: { users: { type: "string" }, "metrics-port": { type: "string" } }, managed: [] },
};

describe("routeFlags", () => {
  it("keeps its own flags, and sends each other flag to the child that has it, bare or with a prefix", () => {
    expect(routeFlags(["--port", "0", "--allow-run-as", "--users=u.json", "--runner.metrics-port", "1", "--gateway.metrics-port=2", "--help"], own, children)).toEqual({
      own: ["--port", "0", "--help"],
      runner: ["--allow-run-as", "--metrics-port", "1"],
      gateway: ["--users", "u.json", "--metrics-port", "2"],
    });
  });

  it("refuses ambiguous, unknown, managed and malformed flags with the way out", () => {
    expect(() => routeFlags(["--metrics-port", "1"], own, children)).toThrow(/say --runner.metrics-port or --gateway.metrics-port/);
    expect(() => routeFlags(["--nope"], own, children)).toThrow(/neither the runner nor the gateway has a --nope flag/);
    expect(() => routeFlags(["--gateway.allow-run-as"], own, children)).toThrow(/the gateway has no --allow-run-as flag/);
    expect(() => routeFlags(["--runner.token", "x"], own, children)).toThrow(/sets the runner's --token itself/);
    expect(() => routeFlags(["--users"], own, children)).toThrow(/--users needs a value/);
    expect(() => routeFlags(["--allow-run-as=yes"], own, children)).toThrow(/takes no value/);
    expect(() => routeFlags(["positional"], own, children)).toThrow(/unexpected argument "positional"/);
  });

  it("sends the gateway's socket, frame and host flags to the gateway bare, and the connection limits both have by prefix", () => {
    const real: Children = { runner: { flags: RUNNER_FLAGS, managed: [] }, gateway: { flags: GATEWAY_FLAGS, managed: [] } };
    const flags = ["--allowed-hosts", "a.example", "--allowed-origins", "https://a.example"];
    const timings = ["--headers-timeout-ms", "1000", "--initialize-timeout-ms", "1000", "--ping-interval-ms", "1000", "--pong-timeout-ms", "1000", "--max-frame-bytes", "65536"];
    expect(routeFlags([...flags, ...timings], own, real)).toEqual({ own: [], runner: [], gateway: [...flags, ...timings] });
    expect(() => routeFlags(["--max-connections", "9"], own, real)).toThrow(/both the runner and the gateway have --max-connections/);
    const limits = ["--gateway.max-connections", "9", "--gateway.max-connections-per-address", "3", "--runner.max-connections", "5", "--runner.max-connections-per-address", "2"];
    expect(routeFlags(limits, own, real)).toEqual({ own: [], runner: ["--max-connections", "5", "--max-connections-per-address", "2"], gateway: ["--max-connections", "9", "--max-connections-per-address", "3"] });
  });
});
