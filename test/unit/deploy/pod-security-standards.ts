/**
 * Kubernetes' Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards), the
 * controls that apply to what these manifests set: the reasons a pod spec breaks a level, none when it meets it.
 */

/** Capabilities "baseline" lets a container add: the container runtimes' default set. */
const BASELINE_CAPABILITIES = ["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"];
/** Volume types "restricted" allows. */
const RESTRICTED_VOLUMES = ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];

const containersOf = (pod: any): any[] => [...(pod.initContainers ?? []), ...pod.containers];

/** Why the pod breaks Pod Security "baseline". */
export function baselineViolations(pod: any): string[] {
  const reasons: string[] = [];
  for (const field of ["hostNetwork", "hostPID", "hostIPC"]) if (pod[field]) reasons.push(`${field}`);
  for (const volume of pod.volumes ?? []) if (volume.hostPath) reasons.push(`hostPath volume ${volume.name}`);
  for (const c of containersOf(pod)) {
    if (c.securityContext?.privileged) reasons.push(`${c.name}: privileged`);
    for (const cap of c.securityContext?.capabilities?.add ?? []) if (!BASELINE_CAPABILITIES.includes(cap)) reasons.push(`${c.name}: adds ${cap}`);
    for (const port of c.ports ?? []) if (port.hostPort) reasons.push(`${c.name}: hostPort ${port.hostPort}`);
    if ([c.securityContext?.seccompProfile?.type, pod.securityContext?.seccompProfile?.type].includes("Unconfined")) reasons.push(`${c.name}: seccomp Unconfined`);
  }
  return reasons;
}

/** Why the pod breaks Pod Security "restricted" (which includes "baseline"). */
export function restrictedViolations(pod: any): string[] {
  const reasons = baselineViolations(pod);
  for (const volume of pod.volumes ?? []) {
    const type = Object.keys(volume).find((key) => key !== "name");
    if (!RESTRICTED_VOLUMES.includes(type!)) reasons.push(`volume ${volume.name} of type ${type}`);
  }
  if (pod.securityContext?.runAsUser === 0) reasons.push("pod: runAsUser 0");
  for (const c of containersOf(pod)) {
    const context = c.securityContext ?? {};
    if (context.allowPrivilegeEscalation !== false) reasons.push(`${c.name}: allowPrivilegeEscalation not false`);
    if ((context.runAsNonRoot ?? pod.securityContext?.runAsNonRoot) !== true) reasons.push(`${c.name}: runAsNonRoot not true`);
    if (context.runAsUser === 0) reasons.push(`${c.name}: runAsUser 0`);
    const seccomp = context.seccompProfile?.type ?? pod.securityContext?.seccompProfile?.type;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") reasons.push(`${c.name}: seccompProfile ${seccomp ?? "unset"}`);
    if (!(context.capabilities?.drop ?? []).includes("ALL")) reasons.push(`${c.name}: does not drop ALL capabilities`);
    for (const cap of context.capabilities?.add ?? []) if (cap !== "NET_BIND_SERVICE") reasons.push(`${c.name}: adds ${cap}`);
  }
  return reasons;
}
