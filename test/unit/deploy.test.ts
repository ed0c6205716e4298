import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse } from "yaml";
import { parseGatewayConfig } from "../../gateway/config.js";
import { createHostGuard } from "../../gateway/wire/host-guard.js";

const ROOT = resolve(import.meta.dirname, "../..");
const KUBERNETES = join(ROOT, "deploy/kubernetes");

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: any };

function manifests(): Manifest[] {
  return readdirSync(KUBERNETES)
    .filter((name) => name.endsWith(".yaml"))
    .flatMap((name) => parseAllDocuments(readFileSync(join(KUBERNETES, name), "utf8")).map((doc) => doc.toJS() as Manifest));
}

/** The kubernetes-models class for a manifest, whose validate() checks it against the Kubernetes OpenAPI schema. */
async function modelFor(manifest: Manifest): Promise<new (data: unknown) => { validate(): void }> {
  const group = manifest.apiVersion === "v1" ? "v1" : manifest.apiVersion;
  const module = (await import(`kubernetes-models/${group}/${manifest.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  return module[manifest.kind]!;
}

const find = (kind: string, name: string): Manifest => manifests().find((m) => m.kind === kind && m.metadata.name === name)!;
const flag = (args: string[], name: string): string | undefined => args[args.indexOf(name) + 1];

describe("Kubernetes manifests", () => {
  it("validate against the Kubernetes schemas", async () => {
    const all = manifests();
    expect(all.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      "Deployment/ahp-gateway",
      "Secret/ahp-terminal-tokens",
      "Service/ahp-gateway",
      "Service/terminal-runner",
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

  it("point the runner's probes at its gRPC port, where grpc.health.v1 is served", () => {
    const runner = find("StatefulSet", "terminal-runner");
    const container = runner.spec.template.spec.containers[0];
    const port = Number(flag(container.args, "--port"));
    expect(container.readinessProbe.grpc.port).toBe(port);
    expect(container.livenessProbe.grpc.port).toBe(port);
    expect(container.ports.find((p: { name: string }) => p.name === "grpc").containerPort).toBe(port);
    const service = find("Service", "terminal-runner");
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
    const gateway = find("Deployment", "ahp-gateway").spec.template.spec.containers[0];
    const service = find("Service", "ahp-gateway");
    const namespace = gateway.env.find((env: { name: string }) => env.name === "POD_NAMESPACE");
    expect(namespace.valueFrom.fieldRef.fieldPath).toBe("metadata.namespace");
    // Kubernetes expands $(POD_NAMESPACE) in args; the gateway parses them as it would at start.
    const args = gateway.args.map((arg: string) => arg.replaceAll("$(POD_NAMESPACE)", "team-a"));
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

  it("wire the gateway to the runners' headless Service, and both to the tokens in the Secret", () => {
    const gateway = find("Deployment", "ahp-gateway").spec.template.spec.containers[0];
    const runnerService = find("Service", "terminal-runner");
    const grpcPort = runnerService.spec.ports.find((p: { name: string }) => p.name === "grpc").port;
    expect(flag(gateway.args, "--runner")).toBe(`http://${runnerService.metadata.name}:${grpcPort}`);
    const secret = find("Secret", "ahp-terminal-tokens");
    const runner = find("StatefulSet", "terminal-runner").spec.template.spec.containers[0];
    for (const container of [gateway, runner]) {
      for (const env of container.env.filter((entry: { valueFrom: Record<string, unknown> }) => !entry.valueFrom.fieldRef)) {
        expect(env.valueFrom.secretKeyRef.name).toBe(secret.metadata.name);
        expect(Object.keys(secret.stringData)).toContain(env.valueFrom.secretKeyRef.key);
      }
    }
  });
});

describe("containers", () => {
  it("copy only files that exist, run the compiled build, and the compose file wires the gateway to the runner", () => {
    for (const name of ["runner.Dockerfile", "gateway.Dockerfile"]) {
      const text = readFileSync(join(ROOT, "deploy", name), "utf8");
      const sources = [...text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap(([, list]) => list!.split(/\s+/));
      expect(sources.length).toBeGreaterThan(0);
      for (const source of sources) expect(existsSync(join(ROOT, source)), `${name}: ${source}`).toBe(true);
      expect(text).toMatch(/USER \d+/);
      expect(text).toMatch(/tini/);
      // The image runs the compiled build of a source it copied and compiled.
      const entry = /ENTRYPOINT \[.*"dist\/app\/([^"]+)\.js"/.exec(text)?.[1];
      expect(entry, `${name}: ENTRYPOINT runs dist/app/…js`).toBeDefined();
      expect(existsSync(join(ROOT, `${entry}.ts`)), `${name}: ${entry}.ts`).toBe(true);
      expect(sources.some((source) => `${entry}.ts`.startsWith(`${source}/`)), `${name}: copies ${entry}.ts`).toBe(true);
      expect(sources).toContain("tsconfig.build.json");
    }
    const compose = parse(readFileSync(join(ROOT, "deploy/compose.yaml"), "utf8"));
    expect(flag(compose.services.gateway.command, "--runner")).toBe("http://runner:7070");
    expect(compose.services.runner.healthcheck.test).toContain("deploy/healthcheck-runner.mjs");
    expect(Object.keys(compose.services.gateway.ports)).toHaveLength(1);
    // Other services of the compose file reach the gateway by its service name.
    const gateway = parseGatewayConfig(compose.services.gateway.command, {}, "/");
    expect(createHostGuard({ allowedHosts: gateway.allowedHosts, allowedOrigins: [], boundHost: gateway.host })({ host: "gateway:7071" })).toBeUndefined();
  });

  it("patch node-pty before it is built, as npm ci and npm install do through the package's postinstall", () => {
    const postinstall = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.postinstall;
    expect(postinstall).toBe("patch-package --error-on-fail && npm rebuild node-pty");
    expect(readdirSync(join(ROOT, "patches"))).toContain("node-pty+1.1.0.patch");
    for (const name of ["runner.Dockerfile", "gateway.Dockerfile"]) {
      const text = readFileSync(join(ROOT, "deploy", name), "utf8");
      const install = /^RUN .*npm ci.*$/m.exec(text);
      expect(install, `${name}: npm ci`).not.toBeNull();
      expect(text.indexOf("COPY patches ./patches"), `${name}: copies patches/ before npm ci`).toBeGreaterThan(-1);
      expect(text.indexOf("COPY patches ./patches")).toBeLessThan(install!.index);
      // Without scripts, the postinstall does not run: the same step must patch, then build.
      if (install![0].includes("--ignore-scripts")) expect(install![0]).toMatch(/npm ci --ignore-scripts && npx --no-install patch-package --error-on-fail && npm rebuild node-pty/);
    }
  });
});
