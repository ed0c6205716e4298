import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "../../../gateway/config.js";
import { parseRunnerConfig } from "../../../services/runner/config.js";
import { compose, servicesBuiltFrom, withSecretFiles } from "./compose-file.js";
import { flag, ROOT } from "./manifests.js";

// A CommonJS module whose typings declare a default export it does not have: required as it is.
const dockerignore = createRequire(import.meta.url)("@balena/dockerignore") as typeof import("@balena/dockerignore").default;
const DOCKERFILES = ["runner.Dockerfile", "gateway.Dockerfile"];
const dockerfile = (name: string): string => readFileSync(join(ROOT, "deploy", name), "utf8");
/** The sources of a Dockerfile's COPY lines (not those copying from another stage). */
const copiedSources = (text: string): string[] => [...text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap(([, list]) => list!.split(/\s+/));
/** The user a Dockerfile's final stage runs as. */
const imageUser = (name: string): string => /^USER (\d+)$/m.exec(dockerfile(name))![1]!;
const ignored = () => dockerignore().add(readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n"));

/** Every file under a path of the repository, relative to its root; installed packages are skipped. */
function filesUnder(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { withFileTypes: true })
    .filter((entry) => entry.name !== "node_modules")
    .flatMap((entry) => filesUnder(relative(ROOT, join(full, entry.name))));
}

describe("containers", () => {
  it("copy only files that exist, run the compiled build, and the compose file wires the gateway to the runners", () => {
    for (const name of DOCKERFILES) {
      const text = dockerfile(name);
      const sources = copiedSources(text);
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
    const { services } = compose();
    const runners = servicesBuiltFrom("runner.Dockerfile");
    expect(runners).toHaveLength(2);
    for (const name of servicesBuiltFrom("gateway.Dockerfile")) {
      const command: string[] = services[name].command;
      expect(command.flatMap((arg, i) => (command[i - 1] === "--runner" ? [arg] : [])), name).toEqual(runners.map((runner) => `http://${runner}:7070`));
      // Clients reach the gateways through the balancer only.
      expect(services[name].ports, name).toBeUndefined();
    }
    for (const name of runners) expect(services[name].healthcheck.test).toContain("deploy/healthcheck-runner.mjs");
  });

  it("patch node-pty before it is built, as npm ci and npm install do through the package's postinstall", () => {
    const postinstall = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.postinstall;
    expect(postinstall).toBe("patch-package --error-on-fail && npm rebuild node-pty");
    expect(readdirSync(join(ROOT, "patches"))).toContain("node-pty+1.1.0.patch");
    for (const name of DOCKERFILES) {
      const text = dockerfile(name);
      const install = /^RUN .*npm ci.*$/m.exec(text);
      expect(install, `${name}: npm ci`).not.toBeNull();
      expect(text.indexOf("COPY patches ./patches"), `${name}: copies patches/ before npm ci`).toBeGreaterThan(-1);
      expect(text.indexOf("COPY patches ./patches")).toBeLessThan(install!.index);
      // Without scripts, the postinstall does not run: the same step must patch, then build.
      if (install![0].includes("--ignore-scripts")) expect(install![0]).toMatch(/npm ci --ignore-scripts && npx --no-install patch-package --error-on-fail && npm rebuild node-pty/);
    }
  });
});

describe("the build context (.dockerignore)", () => {
  it("keeps every file a Dockerfile copies", () => {
    const rules = ignored();
    for (const name of DOCKERFILES) {
      for (const source of copiedSources(dockerfile(name))) {
        const files = filesUnder(source);
        expect(files.length, `${name}: ${source}`).toBeGreaterThan(0);
        for (const file of files) expect(rules.ignores(file), `${name} copies ${file}`).toBe(false);
      }
    }
  });

  it("leaves out what the host installed or built, the repository's history, tests, benchmarks and docs", () => {
    const rules = ignored();
    for (const path of ["node_modules/node-pty/package.json", "gateway/node_modules/x.js", "dist/app/gateway/main.js", ".git/HEAD", ".git", "test/unit/boundaries.test.ts", "bench/run-all.ts", "docs/operations.md", "npm-debug.log", "deploy/compose.yaml", "deploy/haproxy.cfg", "deploy/kubernetes/gateway.yaml"]) {
      expect(rules.ignores(path), path).toBe(true);
    }
  });
});

describe("the compose file", () => {
  it("gives every service CPU and memory limits, no capabilities, and no privilege escalation", () => {
    for (const [name, service] of Object.entries<any>(compose().services)) {
      expect(service.deploy.resources.limits.cpus, name).toBeDefined();
      expect(service.deploy.resources.limits.memory, name).toBeDefined();
      expect(service.cap_drop, name).toEqual(["ALL"]);
      expect(service.security_opt, name).toContain("no-new-privileges:true");
      expect(service.read_only, name).toBe(true);
      expect(service.tmpfs.some((mount: string) => mount.startsWith("/tmp:")), name).toBe(true);
    }
  });

  it("hands tokens over as secret files owned by the image's user, read with the token-file flags, never in the environment", () => {
    const { services, secrets } = compose();
    for (const [name, service] of Object.entries<any>(services)) {
      expect(JSON.stringify(service.environment ?? {}), name).not.toMatch(/TOKEN/);
      for (const secret of service.secrets ?? []) {
        const owner = imageUser(service.build.dockerfile.replace(/^deploy\//, ""));
        expect(secrets[secret.source], `${name}: ${secret.source}`).toBeDefined();
        expect([secret.uid, secret.mode], `${name}: ${secret.source}`).toEqual([owner, 0o400]);
      }
      const files = (service.secrets ?? []).map((secret: { source: string }) => `/run/secrets/${secret.source}`).sort();
      const given = ["--token-file", "--runner-token-file"].map((name) => flag(service.command ?? [], name)).filter(Boolean).sort();
      expect(given, name).toEqual(files);
    }
    for (const name of servicesBuiltFrom("gateway.Dockerfile")) {
      const gateway = parseGatewayConfig(withSecretFiles(services[name].command), {}, "/");
      expect([gateway.token, gateway.runnerToken], name).toEqual(["gateway_token's value", "runner_token's value"]);
    }
    for (const name of servicesBuiltFrom("runner.Dockerfile")) expect(parseRunnerConfig(withSecretFiles(services[name].command), {}).token).toBe("runner_token's value");
  });
});
