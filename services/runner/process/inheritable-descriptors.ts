import { closeSync, readdirSync, readFileSync, readlinkSync } from "node:fs";

/** O_CLOEXEC as the `flags:` line of /proc/<pid>/fdinfo/<fd> prints it (octal, Linux's value on every architecture but alpha, parisc and sparc). */
const O_CLOEXEC = 0o2000000;
/** The first descriptor that is not standard input, output or error. */
const FIRST_NON_STDIO_FD = 3;

/** Whether descriptor `fd` of this process is closed on exec; undefined when /proc cannot say (no /proc, or no such descriptor). */
export function isCloseOnExec(fd: number): boolean | undefined {
  let info: string;
  try {
    info = readFileSync(`/proc/self/fdinfo/${fd}`, "latin1");
  } catch {
    return undefined;
  }
  const flags = /^flags:\s+([0-7]+)$/m.exec(info)?.[1];
  return flags === undefined ? undefined : (parseInt(flags, 8) & O_CLOEXEC) !== 0;
}

/** A descriptor every child of this process would inherit, and what it refers to. */
export interface InheritableDescriptor {
  fd: number;
  target: string;
}

/** This process's descriptors above standard error that are not close-on-exec ([] without /proc). */
export function inheritableDescriptors(): InheritableDescriptor[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc/self/fd");
  } catch {
    return [];
  }
  const found: InheritableDescriptor[] = [];
  for (const entry of entries) {
    const fd = Number(entry);
    // The directory listing's own descriptor is gone by now: no fdinfo, so it is skipped.
    if (fd < FIRST_NON_STDIO_FD || isCloseOnExec(fd) !== false) continue;
    let target = "?";
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      // Closed meanwhile; its number is still worth reporting.
    }
    found.push({ fd, target });
  }
  return found;
}

/**
 * Closes the descriptors this process holds without close-on-exec, so no child it starts inherits
 * them: node opens everything close-on-exec, so these came from whoever started the process (a
 * shell's extra descriptors, a supervisor's pipes) and nothing here uses them. sshd does the same
 * at start. Returns what it closed.
 */
export function closeInheritedDescriptors(): InheritableDescriptor[] {
  const inherited = inheritableDescriptors();
  for (const { fd } of inherited) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
  }
  return inherited;
}
