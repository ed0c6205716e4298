import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { lintPrometheusText } from "../support/prometheus-lint.js";
import { useStarted } from "../support/use-started.js";
import { startRunnerProcess } from "./runner-process.js";
import { ROOT, startServiceProcess, type ServiceProcess } from "./service-process.js";

/** Debian's prometheus package installs it here (.ci/run installs the package). */
const PROMTOOL = "/usr/bin/promtool";
const promtoolInstalled = spawnSync(PROMTOOL, ["--version"]).status === 0;
const SERVICES = ["runner", "gateway"] as const;

/** The metrics URL a process logged when it started listening. */
function metricsUrl(service: ServiceProcess): string {
  return service.stderrLines.map((text) => JSON.parse(text) as { metrics?: string }).find((entry) => entry.metrics)!.metrics!;
}

/** Both compiled processes with metrics on, after a terminal was created, typed into and a bad request made, so labelled series exist. */
const metrics = useStarted(
  "the two processes with metrics",
  async () => {
    const home = mkdtempSync(join(tmpdir(), "metrics-format-"));
    const runner = await startRunnerProcess(["--port", "0", "--token", "metrics", "--metrics-port", "0"], { SHELL: "/bin/sh", HOME: home, ENV: "" }, { compiled: true });
    const gateway = await startServiceProcess("gateway/main.ts", ["--port", "0", "--runner", runner.url, "--metrics-port", "0"], { RUNNER_TOKEN: "metrics", HOME: home }, { compiled: true });
    const client = await AhpTestClient.initialized(gateway.firstLine);
    await client.call("createTerminal", { channel: "ahp-terminal:/metrics" });
    await client.call("subscribe", { channel: "ahp-terminal:/metrics" });
    client.dispatch("ahp-terminal:/metrics", { type: "terminal/input", data: "echo metered-$((1+2))\r" });
    await client.waitForOutput("ahp-terminal:/metrics", /metered-3\r\n/);
    await client.call("nope").catch(() => undefined);
    const text = { runner: await (await fetch(metricsUrl(runner))).text(), gateway: await (await fetch(metricsUrl(gateway))).text() };
    client.close();
    return { text, stop: async () => (await gateway.stop(), await runner.stop()) };
  },
  (started) => started.stop(),
);

describe("the /metrics endpoints of both processes", () => {
  it.skipIf(!promtoolInstalled)(`pass promtool check metrics${promtoolInstalled ? "" : ` (skipped: ${PROMTOOL} is not installed; apt-get install prometheus)`}`, () => {
    for (const service of SERVICES) {
      const checked = spawnSync(PROMTOOL, ["check", "metrics"], { input: metrics.text[service], encoding: "utf8" });
      expect({ service, status: checked.status, said: `${checked.stdout}${checked.stderr}` }).toEqual({ service, status: 0, said: "" });
    }
  });

  it("follow the rules promtool applies, checked without promtool", () => {
    for (const service of SERVICES) expect({ service, problems: lintPrometheusText(metrics.text[service]) }).toEqual({ service, problems: [] });
  });

  it("export only metrics and labels docs/operations.md lists", () => {
    const docs = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const undocumented: string[] = [];
    for (const service of SERVICES) {
      const text = metrics.text[service];
      for (const [, name] of text.matchAll(/^# TYPE (\S+) /gm)) {
        const generic = name!.replace(new RegExp(`^${service}_`), "*_");
        if (!docs.includes(`\`${name}\``) && !docs.includes(`\`${generic}\``)) undocumented.push(name!);
      }
      for (const [, labels] of text.matchAll(/^[^#\s{]+\{([^}]*)\}/gm)) {
        for (const [, label] of labels!.matchAll(/([a-z_]+)="/g)) if (label !== "le" && !docs.includes(`\`${label}\``)) undocumented.push(`label ${label}`);
      }
    }
    expect([...new Set(undocumented)]).toEqual([]);
  });
});
