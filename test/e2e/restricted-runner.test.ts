import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
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
/** CAP_SYS_ADMIN's bit in /proc/self/status's CapEff: mounting needs it. */
const CAP_SYS_ADMIN = 21n;
const effective = BigInt(`0x${/^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))![1]}`);
const CAN_MOUNT = process.getuid?.() === 0 && ((effective >> CAP_SYS_ADMIN) & 1n) === 1n && existsSync("/usr/bin/unshare") && existsSync("/usr/bin/setpriv");
if (!CAN_MOUNT) console.warn(`SKIPPED: starting the runner in a mount namespace of its own with a read-only root needs root with CAP_SYS_ADMIN, unshare and setpriv; running as uid ${process.getuid?.()}`);

/**
 * Runs the runner as the manifest's container would: in a mount namespace of its own whose root is read-only
 * and whose emptyDirs are empty tmpfs, as the pod's non-root user with no capabilities and no_new_privs.
 */
const launcher = [
  "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-ec",
  [
    // /home/runner does not exist on the test's host: a tmpfs on /home makes room for it without writing there.
    "mount -t tmpfs tmpfs /home",
    ...writable.map((path) => `mkdir -p ${path} && mount -t tmpfs -o uid=${uid},gid=${gid},mode=0700 tmpfs ${path}`),
    ...(context.readOnlyRootFilesystem ? ["mount -o remount,bind,ro /"] : []),
    `exec /usr/bin/setpriv --reuid=${uid} --regid=${gid} --clear-groups ${context.allowPrivilegeEscalation === false ? "--no-new-privs" : ""} --bounding-set=-all${(context.capabilities.add ?? []).map((name: string) => `,+${name.toLowerCase()}`).join("")} --inh-caps=-all "$@"`,
  ].join("\n"),
  "sh",
];

describe.skipIf(!CAN_MOUNT)("a runner run as its restricted Kubernetes manifest runs it", () => {
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
