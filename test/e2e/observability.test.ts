import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { eventually } from "../support/eventually.js";
import { startRunnerProcess } from "./runner-process.js";
import { ROOT, startServiceProcess, type ServiceProcess } from "./service-process.js";

/** The metrics URL a process logged when it started listening. */
function metricsUrl(service: ServiceProcess): string {
  const line = service.stderrLines.map((text) => JSON.parse(text) as { metrics?: string }).find((entry) => entry.metrics);
  return line!.metrics!;
}

describe("health, readiness and metrics of the two processes", () => {
  it("export Prometheus metrics and health endpoints that follow the runner", async () => {
    const home = mkdtempSync(join(tmpdir(), "obs-"));
    const runner = await startRunnerProcess(["--port", "0", "--token", "obs", "--metrics-port", "0"], { SHELL: "/bin/sh", HOME: home });
    const gateway = await startServiceProcess("gateway/main.ts", ["--port", "0", "--runner", runner.url, "--metrics-port", "0"], { RUNNER_TOKEN: "obs", HOME: home });
    try {
      const http = gateway.firstLine.replace(/^ws:/, "http:").replace(/\/\?.*$/, "");
      expect(await (await fetch(`${http}/healthz`)).text()).toBe("ok\n");
      const ready = await fetch(`${http}/readyz`);
      expect([ready.status, await ready.text()]).toEqual([200, "ready\n"]);

      const client = await AhpTestClient.initialized(gateway.firstLine);
      await client.call("createTerminal", { channel: "ahp-terminal:/obs" });
      await client.call("subscribe", { channel: "ahp-terminal:/obs" });
      client.dispatch("ahp-terminal:/obs", { type: "terminal/input", data: "echo metrics-$((3+3))\r" });
      await client.waitForOutput("ahp-terminal:/obs", /metrics-6\r\n/);
      expect(await (await fetch(metricsUrl(runner))).text()).toMatch(/^runner_attach_subscribers 1$/m);
      client.dispatch("ahp-terminal:/obs", { type: "terminal/input", data: "exit 4\r" });
      client.dispatch("ahp-terminal:/obs", { type: "terminal/data", data: "forged" });
      await client.waitForEnvelope((e) => e.action.type === "terminal/exited");
      await client.call("nope").catch(() => undefined);

      const runnerMetrics = await (await fetch(metricsUrl(runner))).text();
      for (const line of [
        /^runner_terminals_open 1$/m,
        /^runner_spawns_total\{mode="pty",outcome="started"\} 1$/m,
        /^runner_exits_total\{code="4"\} 1$/m,
        /^runner_output_bytes_total [1-9]\d*$/m,
        /^runner_evicted_bytes_total 0$/m,
        /^runner_attach_subscribers 0$/m,
        /^runner_rpc_requests_total\{method="Spawn",code="OK"\} 1$/m,
        // Input travels on one WriteStream per terminal: "echo metrics-$((3+3))\r" and "exit 4\r".
        /^runner_input_bytes_total 29$/m,
        /^runner_rpc_duration_seconds_count\{method="Spawn"\} 1$/m,
      ]) {
        expect(runnerMetrics).toMatch(line);
      }
      const gatewayMetrics = await (await fetch(metricsUrl(gateway))).text();
      for (const line of [
        /^gateway_connections 1$/m,
        /^gateway_terminals_open 1$/m,
        // Read by this client (it is still subscribed), so followed.
        /^gateway_followed_terminals 1$/m,
        /^gateway_jsonrpc_requests_total\{method="createTerminal",code="OK"\} 1$/m,
        /^gateway_jsonrpc_requests_total\{method="unknown",code="METHOD_NOT_FOUND"\} 1$/m,
        /^gateway_jsonrpc_request_duration_seconds_count\{method="initialize"\} 1$/m,
        /^gateway_rejected_actions_total\{reason="not_dispatchable"\} 1$/m,
      ]) {
        expect(gatewayMetrics).toMatch(line);
      }
      client.close();

      const port = new URL(runner.url).port;
      const containerCheck = () => spawnSync(process.execPath, ["deploy/healthcheck-runner.mjs", port], { cwd: ROOT }).status;
      expect(containerCheck()).toBe(0);
      await runner.stop("SIGKILL");
      expect(containerCheck()).toBe(1);
      expect(
        await eventually(async () => (await fetch(`${http}/readyz`)).status === 503, 5_000),
      ).toBe(true);
      expect((await fetch(`${http}/healthz`)).status).toBe(200);
    } finally {
      await gateway.stop();
      await runner.stop("SIGKILL");
    }
  });
});
