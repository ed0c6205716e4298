import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CAN_RUN_AS_POD, podLauncher, POD_SKIP_REASON } from "./pod-launcher.js";
import { ROOT, startRunnerProcess, type RunnerProcess } from "./runner-process.js";

const TOKEN = "restricted-runner-test-token";
/** The restricted runner's pod as its Kubernetes manifest gives it. */
const pod = parse(readFileSync(join(ROOT, "deploy/kubernetes/runner/restricted.yaml"), "utf8")).spec.template.spec;
const container = pod.containers[0];
const context = container.securityContext;
const uid: number = pod.securityContext.runAsUser;
const gid: number = pod.securityContext.runAsGroup;
/** Where the pod writes: the container's emptyDir mounts. */
const writable: string[] = container.volumeMounts
  .filter((mount: { name: string }) => pod.volumes.find((volume: { name: string }) => volume.name === mount.name).emptyDir)
  .map((mount: { mountPath: string }) => mount.mountPath);
const HOME = "/home/runner";
if (POD_SKIP_REASON) console.warn(POD_SKIP_REASON);

/** The pod's emptyDirs as empty tmpfs (a tmpfs on /home makes room for /home/runner without writing to the host). */
const launcher = podLauncher({
  prepare: ["mount -t tmpfs tmpfs /home", ...writable.map((path) => `mkdir -p ${path} && mount -t tmpfs -o uid=${uid},gid=${gid},mode=0700 tmpfs ${path}`)],
  context,
  uid,
  gid,
  groups: pod.securityContext.fsGroup === undefined ? [] : [pod.securityContext.fsGroup],
});

describe.skipIf(!CAN_RUN_AS_POD)("a runner run as its restricted Kubernetes manifest runs it", () => {
  let runner: RunnerProcess;
  beforeAll(async () => {
    runner = await startRunnerProcess(["--port", "0", "--token", TOKEN], { HOME, TMPDIR: "/tmp" }, { launcher, compiled: true });
  });
  afterAll(() => runner?.stop());

  it("mounts the manifest's home and /tmp as emptyDirs", () => {
    expect(writable.sort()).toEqual([HOME, "/tmp"]);
  });

  it("runs pty terminals as its user, which write to their home and /tmp and nowhere else", async () => {
    const client = runner.client(TOKEN);
    const script = `id -u; echo home > "$HOME/f" && cat "$HOME/f"; echo tmp > /tmp/f && cat /tmp/f; touch /app-file 2>&1; touch ${ROOT}/x 2>&1; grep CapEff /proc/self/status; echo done`;
    const { terminal } = await client.spawn({ argv: ["/bin/sh", "-c", script] });
    let output = "";
    for await (const event of client.attach({ id: terminal!.id, follow: true })) {
      if (event.event.case === "output") output += Buffer.from(event.event.value.data).toString();
    }
    expect(output).toMatch(new RegExp(`^${uid}\\r?\\nhome\\r?\\ntmp\\r?\\n`));
    expect(output).toMatch(/touch: cannot touch '\/app-file': Read-only file system/);
    expect(output).toMatch(/Read-only file system[\s\S]*CapEff:\s*0+\r?\ndone/);
  });
});
