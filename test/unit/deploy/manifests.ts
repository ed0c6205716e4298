import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { onTestFinished } from "vitest";
import { parseAllDocuments } from "yaml";

export const ROOT = resolve(import.meta.dirname, "../../..");
export const KUBERNETES = join(ROOT, "deploy/kubernetes");
/** The runner's StatefulSets, one per way of running it; an operator applies exactly one. */
export const RUNNER_VARIANTS = ["restricted", "run-as"] as const;
export type RunnerVariant = (typeof RUNNER_VARIANTS)[number];

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [key: string]: any };

function manifestsIn(paths: string[]): Manifest[] {
  return paths.flatMap((path) => parseAllDocuments(readFileSync(path, "utf8")).map((doc) => doc.toJS() as Manifest));
}

const yamlFiles = (dir: string): string[] => readdirSync(dir).filter((name) => name.endsWith(".yaml")).map((name) => join(dir, name));

/** What `kubectl apply -f deploy/kubernetes/ -f deploy/kubernetes/runner/VARIANT.yaml` applies. */
export function deployment(variant: RunnerVariant): Manifest[] {
  return manifestsIn([...yamlFiles(KUBERNETES), join(KUBERNETES, "runner", `${variant}.yaml`)]);
}

/** Every manifest under deploy/kubernetes, both runner variants included. */
export function allManifests(): Manifest[] {
  return manifestsIn([...yamlFiles(KUBERNETES), ...yamlFiles(join(KUBERNETES, "runner"))]);
}

/** The manifest of this kind and name in a variant's deployment (the restricted one unless named). */
export function find(kind: string, name: string, variant: RunnerVariant = "restricted"): Manifest {
  const found = deployment(variant).find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name} in the ${variant} deployment`);
  return found;
}

/** The pod template's spec of every workload among the manifests. */
export function podSpecs(manifests: Manifest[]): { name: string; spec: any }[] {
  return manifests.filter((m) => m.spec?.template?.spec).map((m) => ({ name: `${m.kind}/${m.metadata.name}`, spec: m.spec.template.spec }));
}

/** The value after a flag in an argument list. */
export const flag = (args: string[], name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);

/**
 * The container's args with each path under a Secret volume's mountPath moved to a scratch directory that
 * holds that volume's files as the kubelet would write them (the Secret's keys, as its items name them),
 * so the process's config can be parsed here as it is in the pod.
 */
export function withMountedSecrets(podSpec: any, container: any, secrets: Manifest[]): string[] {
  let args: string[] = container.args;
  for (const mount of container.volumeMounts ?? []) {
    const volume = podSpec.volumes.find((v: { name: string }) => v.name === mount.name);
    if (!volume?.secret) continue;
    const secret = secrets.find((s) => s.kind === "Secret" && s.metadata.name === volume.secret.secretName);
    if (!secret) throw new Error(`no Secret ${volume.secret.secretName}`);
    const dir = scratchSecretFiles(Object.fromEntries(volume.secret.items.map((item: { key: string; path: string }) => [item.path, secret.stringData[item.key]])));
    args = args.map((arg) => arg.replaceAll(`${mount.mountPath}/`, `${dir}/`));
  }
  return args;
}

/** A scratch directory holding these files, mode 600, as a secret mount would; removed when the calling test ends. */
export function scratchSecretFiles(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "mounted-secret-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content, { mode: 0o600 });
  return dir;
}
