import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "../../../gateway/config.js";
import { createHostGuard } from "../../../gateway/wire/host-guard.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { allManifests, find, flag, ROOT, RUNNER_VARIANTS, withMountedSecrets, type Manifest } from "./manifests.js";

/** The kubernetes-models class for a manifest, whose validate() checks it against the Kubernetes OpenAPI schema. */
async function modelFor(manifest: Manifest): Promise<new (data: unknown) => { validate(): void }> {
  const group = manifest.apiVersion === "v1" ? "v1" : manifest.apiVersion;
  const module = (await import(`kubernetes-models/${group}/${manifest.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  return module[manifest.kind]!;
}

describe("Kubernetes manifests", () => {
  it("validate against the Kubernetes schemas", async () => {
    const all = allManifests();
    expect(all.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      "Deployment/ahp-gateway",
      "NetworkPolicy/terminal-runner",
      "PodDisruptionBudget/ahp-gateway",
      "Secret/ahp-terminal-tokens",
      "Service/ahp-gateway",
      "Service/terminal-runner",
      // One per runner variant (restricted, run-as): an operator applies one of them.
      "StatefulSet/terminal-runner",
      "StatefulSet/terminal-runner",
    ]);
    for (const manifest of all) {
      const Model = await modelFor(manifest);
      expect(() => new Model(manifest).validate(), `${manifest.kind}/${manifest.metadata.name}`).not.toThrow();
    }
  });

  it("fail validation when a manifest is broken (the check itself works)", async () => {
    const broken = structuredClone(find("Deployment", "ahp-gateway"));
    delete broken.spec.selector;
    const Model = await modelFor(broken);
    expect(() => new Model(broken).validate()).toThrow(/selector/);
  });

  it.each(RUNNER_VARIANTS)("point the %s runner's probes at its gRPC port, where grpc.health.v1 is served", (variant) => {
    const runner = find("StatefulSet", "terminal-runner", variant);
    const container = runner.spec.template.spec.containers[0];
    const port = Number(flag(container.args, "--port"));
    expect(container.readinessProbe.grpc.port).toBe(port);
    expect(container.livenessProbe.grpc.port).toBe(port);
    expect(container.ports.find((p: { name: string }) => p.name === "grpc").containerPort).toBe(port);
    const service = find("Service", "terminal-runner", variant);
    expect(service.spec.clusterIP).toBe("None");
    expect(runner.spec.serviceName).toBe("terminal-runner");
  });

  it("point the gateway's probes at /readyz and /healthz on its WebSocket port, routes the gateway serves", () => {
    const gateway = find("Deployment", "ahp-gateway").spec.template.spec.containers[0];
    const port = Number(flag(gateway.args, "--port"));
    expect(gateway.ports.find((p: { name: string }) => p.name === "ws").containerPort).toBe(port);
    expect([gateway.readinessProbe.httpGet.path, gateway.livenessProbe.httpGet.path]).toEqual(["/readyz", "/healthz"]);
    const source = readFileSync(join(ROOT, "gateway/server.ts"), "utf8");
    for (const path of ["/readyz", "/healthz"]) expect(source).toContain(`"${path}"`);
  });

  it("allow the names the gateway's Service gives it, and the probes (which name the pod's address), and no other name", () => {
    const pod = find("Deployment", "ahp-gateway").spec.template.spec;
    const gateway = pod.containers[0];
    const service = find("Service", "ahp-gateway");
    const namespace = gateway.env.find((env: { name: string }) => env.name === "POD_NAMESPACE");
    expect(namespace.valueFrom.fieldRef.fieldPath).toBe("metadata.namespace");
    // Kubernetes expands $(POD_NAMESPACE) in args; the gateway parses them as it would at start.
    const args = withMountedSecrets(pod, gateway, allManifests()).map((arg: string) => arg.replaceAll("$(POD_NAMESPACE)", "team-a"));
    const config = parseGatewayConfig(args, {}, "/");
    const guard = createHostGuard({ allowedHosts: config.allowedHosts, allowedOrigins: config.allowedOrigins, boundHost: config.host });
    const port = service.spec.ports.find((p: { name: string }) => p.name === "ws").port;
    for (const name of [service.metadata.name, `${service.metadata.name}.team-a`, `${service.metadata.name}.team-a.svc`, `${service.metadata.name}.team-a.svc.cluster.local`, "10.244.1.7", "localhost"]) {
      expect(guard({ host: `${name}:${port}` }), name).toBeUndefined();
    }
    expect(guard({ host: `evil.example:${port}` })).toBeDefined();
    expect(guard({ host: `${service.metadata.name}.other-team.svc:${port}` })).toBeDefined();
    expect(config.socketLimits.maxConnectionsPerAddress).toBe(config.socketLimits.maxConnections);
  });

  it("wire the gateway to the runners' headless Service", () => {
    const gateway = find("Deployment", "ahp-gateway").spec.template.spec.containers[0];
    const runnerService = find("Service", "terminal-runner");
    const grpcPort = runnerService.spec.ports.find((p: { name: string }) => p.name === "grpc").port;
    expect(flag(gateway.args, "--runner")).toBe(`http://${runnerService.metadata.name}:${grpcPort}`);
  });
});
