import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { ROOT, startServiceProcess, type ServiceProcess } from "./service-process.js";

const manifests = parseAllDocuments(readFileSync(join(ROOT, "deploy/kubernetes/gateway.yaml"), "utf8")).map((doc) => doc.toJS());
const pod = manifests.find((m) => m.kind === "Deployment").spec.template.spec;
const container = pod.containers[0];
const context = container.securityContext;
const secret = parse(readFileSync(join(ROOT, "deploy/kubernetes/secrets.yaml"), "utf8"));
const tokensMount = container.volumeMounts.find((mount: { name: string }) => pod.volumes.find((v: { name: string }) => v.name === mount.name).secret);
const tokensVolume = pod.volumes.find((volume: { name: string }) => volume.name === tokensMount.name).secret;
const emptyDirs: string[] = container.volumeMounts
  .filter((mount: { name: string }) => pod.volumes.find((volume: { name: string }) => volume.name === mount.name).emptyDir)
  .map((mount: { mountPath: string }) => mount.mountPath);
const { runAsUser: uid, runAsGroup: gid, fsGroup } = pod.securityContext;

/** CAP_SYS_ADMIN's bit in /proc/self/status's CapEff: mounting needs it. */
const CAP_SYS_ADMIN = 21n;
const effective = BigInt(`0x${/^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))![1]}`);
const CAN_MOUNT = process.getuid?.() === 0 && ((effective >> CAP_SYS_ADMIN) & 1n) === 1n && existsSync("/usr/bin/unshare") && existsSync("/usr/bin/setpriv");
if (!CAN_MOUNT) console.warn(`SKIPPED: starting the gateway in a mount namespace of its own with a read-only root needs root with CAP_SYS_ADMIN, unshare and setpriv; running as uid ${process.getuid?.()}`);

describe.skipIf(!CAN_MOUNT)("a gateway run as its Kubernetes manifest runs it", () => {
  let tokens: string;
  let runner: RunnerProcess;
  let gateway: ServiceProcess;
  beforeAll(async () => {
    // The Secret's files as the kubelet writes them: root's; with an fsGroup, that group's, with group read added.
    tokens = mkdtempSync(join(tmpdir(), "gateway-tokens-"));
    chmodSync(tokens, fsGroup === undefined ? 0o700 : 0o750);
    chownSync(tokens, 0, fsGroup ?? 0);
    for (const item of tokensVolume.items) {
      const path = join(tokens, item.path);
      writeFileSync(path, secret.stringData[item.key]);
      chmodSync(path, tokensVolume.defaultMode | (fsGroup === undefined ? 0 : 0o040));
      chownSync(path, 0, fsGroup ?? 0);
    }
    runner = await startRunnerProcess(["--port", "0", "--token", secret.stringData["runner-token"]]);
    const args = (container.args as string[]).map((arg, i, all) =>
      all[i - 1] === "--runner" ? runner.url : all[i - 1] === "--port" || all[i - 1] === "--metrics-port" ? "0" : arg.replaceAll("$(POD_NAMESPACE)", "team-a"),
    );
    // A mount namespace of its own: read-only root, tmpfs for each emptyDir, the token files where the Secret is mounted;
    // then the pod's user and groups, no capabilities, no_new_privs.
    const launcher = [
      "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-ec",
      [
        "mount -t tmpfs tmpfs /run",
        `mkdir -p ${tokensMount.mountPath} && mount --bind -o ro ${tokens} ${tokensMount.mountPath}`,
        ...emptyDirs.map((path) => `mount -t tmpfs tmpfs ${path}`),
        ...(context.readOnlyRootFilesystem ? ["mount -o remount,bind,ro /"] : []),
        `exec /usr/bin/setpriv --reuid=${uid} --regid=${gid} ${fsGroup === undefined ? "--clear-groups" : `--groups=${fsGroup}`} ${context.allowPrivilegeEscalation === false ? "--no-new-privs" : ""} --bounding-set=-all --inh-caps=-all "$@"`,
      ].join("\n"),
      "sh",
    ];
    gateway = await startServiceProcess("gateway/main.ts", args, { HOME: "/nonexistent", GATEWAY_TOKEN: undefined, RUNNER_TOKEN: undefined }, { launcher, compiled: true });
  });
  afterAll(async () => {
    await gateway?.stop();
    await runner?.stop();
    rmSync(tokens, { recursive: true, force: true });
  });

  it("serves, reaches the runner with the token from its file, and takes clients with the other", async () => {
    const base = gateway.firstLine.replace(/^ws/, "http").replace(/\/\/[^/:]+:/, "//127.0.0.1:").replace(/\/?(\?.*)?$/, "");
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    let ready = 0;
    for (let attempt = 0; attempt < 100 && ready !== 200; attempt++) {
      ready = (await fetch(`${base}/readyz`)).status;
      if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ready).toBe(200);
    const status = readFileSync(`/proc/${gateway.child.pid}/status`, "utf8");
    expect(status).toMatch(new RegExp(`^Uid:\\s+${uid}\\s`, "m"));
    expect(status).toMatch(/^CapEff:\s+0+$/m);
  });
});
