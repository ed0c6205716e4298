import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "../../../gateway/config.js";
import { parseRunnerConfig } from "../../../services/runner/config.js";
import { allManifests, deployment, find, flag, podSpecs, ROOT, RUNNER_VARIANTS, withMountedSecrets } from "./manifests.js";
import { baselineViolations, restrictedViolations } from "./pod-security-standards.js";

/** What run-as takes (services/runner/process/): setpriv's uid, gid and groups, the pty's owner, signals to another uid, checks inside private directories. */
const RUN_AS_CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "KILL", "SETGID", "SETUID"];

const dockerfile = (name: string): string => readFileSync(join(ROOT, "deploy", name), "utf8");
const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const gatewayPod = () => find("Deployment", "ahp-gateway").spec.template.spec;
const runnerPod = (variant: (typeof RUNNER_VARIANTS)[number]) => find("StatefulSet", "terminal-runner", variant).spec.template.spec;
const everyPod = () => podSpecs(allManifests());
const everyContainer = () => everyPod().flatMap(({ name, spec }) => spec.containers.map((container: any) => ({ name: `${name} ${container.name}`, spec, container })));

describe("every pod", () => {
  it("mounts no service-account token, which any shell in it could read", () => {
    expect(everyPod().length).toBe(3);
    for (const { name, spec } of everyPod()) expect(spec.automountServiceAccountToken, name).toBe(false);
  });

  it("takes its tokens from the Secret as files only their owner may read, never from the environment", () => {
    for (const { name, spec } of everyPod()) {
      const secrets = spec.volumes.filter((volume: { secret?: unknown }) => volume.secret);
      expect(secrets, name).toHaveLength(1);
      for (const volume of secrets) expect(volume.secret.defaultMode, name).toBe(0o400);
    }
    for (const { name, container } of everyContainer()) {
      for (const env of container.env ?? []) {
        expect(env.valueFrom?.secretKeyRef, `${name}: ${env.name}`).toBeUndefined();
        expect(env.name, name).not.toMatch(/TOKEN/);
      }
    }
  });

  it("runs every container with no privilege escalation, no capability it does not list, seccomp, and CPU and memory bounds", () => {
    for (const { name, spec, container } of everyContainer()) {
      const context = container.securityContext;
      expect(context.allowPrivilegeEscalation, name).toBe(false);
      expect(context.capabilities.drop, name).toEqual(["ALL"]);
      expect(context.seccompProfile?.type ?? spec.securityContext.seccompProfile.type, name).toBe("RuntimeDefault");
      for (const resource of ["cpu", "memory"]) {
        expect(container.resources.requests[resource], `${name}: ${resource} request`).toBeDefined();
        expect(container.resources.limits[resource], `${name}: ${resource} limit`).toBeDefined();
      }
    }
  });

  it("runs an image tagged with the package's version, never :latest", () => {
    for (const { name, container } of everyContainer()) expect(container.image, name).toMatch(new RegExp(`:${version.replaceAll(".", "\\.")}$`));
  });
});

describe("the gateway's pod", () => {
  it("runs as the image's fixed non-root user on a read-only root filesystem, writing only to an emptyDir /tmp", () => {
    const pod = gatewayPod();
    const container = pod.containers[0];
    const imageUser = Number(/^USER (\d+)$/m.exec(dockerfile("gateway.Dockerfile"))![1]);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: imageUser });
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    const tmp = container.volumeMounts.find((mount: { mountPath: string }) => mount.mountPath === "/tmp");
    expect(pod.volumes.find((volume: { name: string }) => volume.name === tmp.name).emptyDir).toBeDefined();
    expect(restrictedViolations(pod)).toEqual([]);
  });

  it("reads both tokens from the Secret's files: the gateway's config gets the Secret's values", () => {
    const pod = gatewayPod();
    const secret = find("Secret", "ahp-terminal-tokens");
    const config = parseGatewayConfig(withMountedSecrets(pod, pod.containers[0], allManifests()).map((arg) => arg.replaceAll("$(POD_NAMESPACE)", "ns")), {}, "/");
    expect(config.token).toBe(secret.stringData["gateway-token"]);
    expect(config.runnerToken).toBe(secret.stringData["runner-token"]);
  });
});

describe("the runner's pods", () => {
  it.each(RUNNER_VARIANTS)("%s: read the runner's token from the Secret's file", (variant) => {
    const pod = runnerPod(variant);
    const config = parseRunnerConfig(withMountedSecrets(pod, pod.containers[0], allManifests()), {});
    expect(config.token).toBe(find("Secret", "ahp-terminal-tokens").stringData["runner-token"]);
    expect(config.allowRunAs).toBe(variant === "run-as");
  });

  it("with run-as off: meet Pod Security restricted, as the image's user, its home and /tmp in emptyDirs on a read-only root", () => {
    const pod = runnerPod("restricted");
    const container = pod.containers[0];
    const image = dockerfile("runner.Dockerfile");
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: Number(/^USER (\d+)$/m.exec(image)![1]) });
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    const home = /^ENV .*HOME=(\S+)/m.exec(image)![1];
    for (const path of [home, "/tmp"]) {
      const mount = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === path);
      expect(pod.volumes.find((volume: { name: string }) => volume.name === mount?.name)?.emptyDir, path).toBeDefined();
    }
    expect(restrictedViolations(pod)).toEqual([]);
  });

  it("with run-as on: root with only the capabilities run-as takes, which Pod Security baseline allows and restricted does not", () => {
    const pod = runnerPod("run-as");
    expect(pod.securityContext.runAsUser).toBe(0);
    expect([...pod.containers[0].securityContext.capabilities.add].sort()).toEqual(RUN_AS_CAPABILITIES);
    expect(baselineViolations(pod)).toEqual([]);
    expect(restrictedViolations(pod)).toEqual(expect.arrayContaining(["pod: runAsUser 0", "runner: runAsNonRoot not true", "runner: adds SETUID"]));
  });

  it("differ between the two variants only in who the runner runs as, --allow-run-as, and the volumes a read-only root needs", () => {
    const strip = (variant: (typeof RUNNER_VARIANTS)[number]) => {
      const set = structuredClone(find("StatefulSet", "terminal-runner", variant));
      const pod = set.spec.template.spec;
      delete pod.securityContext;
      delete pod.volumes;
      for (const container of pod.containers) {
        delete container.securityContext;
        delete container.volumeMounts;
        container.args = container.args.filter((arg: string) => arg !== "--allow-run-as");
      }
      return set;
    };
    expect(strip("run-as")).toEqual(strip("restricted"));
    expect(flag(runnerPod("restricted").containers[0].args, "--allow-run-as")).toBeUndefined();
  });

  it("are reachable on their RPC port from gateway pods only, and on their metrics port from Prometheus's namespace", () => {
    const policy = find("NetworkPolicy", "terminal-runner");
    for (const variant of RUNNER_VARIANTS) {
      expect(find("StatefulSet", "terminal-runner", variant).spec.template.metadata.labels).toMatchObject(policy.spec.podSelector.matchLabels);
    }
    expect(policy.spec.policyTypes).toEqual(["Ingress"]);
    const gatewayLabels = find("Deployment", "ahp-gateway").spec.template.metadata.labels;
    const rulesFor = (port: string) => policy.spec.ingress.filter((rule: any) => rule.ports.some((p: { port: string }) => p.port === port));
    const grpc = rulesFor("grpc");
    expect(grpc).toHaveLength(1);
    expect(grpc[0].from).toHaveLength(1);
    expect(grpc[0].from[0].namespaceSelector).toBeUndefined();
    expect(gatewayLabels).toMatchObject(grpc[0].from[0].podSelector.matchLabels);
    expect(rulesFor("metrics").map((rule: any) => rule.from)).toEqual([[{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }]]);
    expect(policy.spec.ingress.flatMap((rule: any) => rule.ports.map((p: { port: string }) => p.port)).sort()).toEqual(["grpc", "metrics"]);
    // Every port the runners serve is named in the policy by the name their container gives it.
    for (const variant of RUNNER_VARIANTS) expect(runnerPod(variant).containers[0].ports.map((p: { name: string }) => p.name).sort()).toEqual(["grpc", "metrics"]);
    expect(deployment("run-as").filter((m) => m.kind === "NetworkPolicy")).toHaveLength(1);
  });
});
