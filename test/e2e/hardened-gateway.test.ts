import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { CAN_RUN_AS_POD, podLauncher, POD_SKIP_REASON } from "./pod-launcher.js";
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

if (POD_SKIP_REASON) console.warn(POD_SKIP_REASON);

describe.skipIf(!CAN_RUN_AS_POD)("a gateway run as its Kubernetes manifest runs it", () => {
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
    // The token files where the Secret is mounted (on a tmpfs /run, not the host's), then a tmpfs for each emptyDir.
    const launcher = podLauncher({
      prepare: ["mount -t tmpfs tmpfs /run", `mkdir -p ${tokensMount.mountPath} && mount --bind -o ro ${tokens} ${tokensMount.mountPath}`, ...emptyDirs.map((path) => `mount -t tmpfs tmpfs ${path}`)],
      context,
      uid,
      gid,
      groups: fsGroup === undefined ? [] : [fsGroup],
    });
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
