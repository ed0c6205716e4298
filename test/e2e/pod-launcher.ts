import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The checkout the process runs from: it must stay in reach when a tmpfs is mounted over a folder above it (/tmp, /home). */
const CHECKOUT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** CAP_SYS_ADMIN's bit in /proc/self/status's CapEff: mounting needs it. */
const CAP_SYS_ADMIN = 21n;
const effective = BigInt(`0x${/^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))![1]}`);

/** Whether a process can be started as a pod would run it here (root with CAP_SYS_ADMIN, unshare and setpriv). */
export const CAN_RUN_AS_POD = process.getuid?.() === 0 && ((effective >> CAP_SYS_ADMIN) & 1n) === 1n && existsSync("/usr/bin/unshare") && existsSync("/usr/bin/setpriv");
/** Why such tests are skipped here, or undefined when they run. */
export const POD_SKIP_REASON = CAN_RUN_AS_POD
  ? undefined
  : `SKIPPED: starting a process as a pod runs it (a mount namespace of its own, a read-only root) needs root with CAP_SYS_ADMIN, unshare and setpriv; running as uid ${process.getuid?.()}`;

/** What of a pod's spec shapes how its container's process runs. */
export interface PodSetting {
  /** Shell commands run as root in the new mount namespace before the root is made read-only (mounts). */
  prepare: string[];
  /** The container's securityContext. */
  context: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { add?: string[] } };
  uid: number;
  gid: number;
  /** Supplementary groups (the pod's fsGroup); none when empty. */
  groups: number[];
}

/**
 * A launcher (StartOptions.launcher) that runs a process as a container of the pod would: in a mount
 * namespace of its own (private, so nothing reaches the host's), read-only root when the container says
 * so, as the pod's user and groups, with only the capabilities it adds, and no_new_privs unless it allows
 * privilege escalation.
 */
export function podLauncher({ prepare, context, uid, gid, groups }: PodSetting): string[] {
  const capabilities = (context.capabilities?.add ?? []).map((name) => `,+${name.toLowerCase()}`).join("");
  const setpriv = [
    "exec /usr/bin/setpriv",
    `--reuid=${uid}`,
    `--regid=${gid}`,
    groups.length ? `--groups=${groups.join(",")}` : "--clear-groups",
    ...(context.allowPrivilegeEscalation === false ? ["--no-new-privs"] : []),
    `--bounding-set=-all${capabilities}`,
    "--inh-caps=-all",
    '"$@"',
  ].join(" ");
  const checkout = `'${CHECKOUT.replaceAll("'", "'\\''")}'`;
  // An emptyDir's tmpfs over a folder that holds the checkout would hide it: it is opened first and bound back
  // after, through the open descriptor (not canonicalized: its path by name would be the new, empty folder).
  const keepCheckout = [`exec 9<${checkout}`, ...prepare, `[ -e ${checkout}/package.json ] || { mkdir -p ${checkout} && mount --no-canonicalize --bind /proc/self/fd/9 ${checkout}; }`, "exec 9<&-"];
  const script = [...keepCheckout, ...(context.readOnlyRootFilesystem ? ["mount -o remount,bind,ro /"] : []), setpriv].join("\n");
  return ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-ec", script, "sh"];
}
