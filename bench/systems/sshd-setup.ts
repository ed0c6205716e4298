import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PEERS_DIR } from "./peer-process.js";

/** Debian's sshd (openssh-server); the bench uses it as installed and never installs it. */
export const SSHD = "/usr/sbin/sshd";
/** sshd refuses to start without its privilege-separation directory, which the package's service unit creates at boot. */
const PRIVSEP_DIR = "/run/sshd";
/** Connections sshd lets wait for authentication at once (10 by default, then it drops some): the bench opens many together. */
const MAX_STARTUPS = 500;

const DIR = join(PEERS_DIR, "sshd");

function keygen(path: string): void {
  if (existsSync(path)) return;
  const result = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path], { encoding: "utf8" });
  if (result.error || result.status !== 0) throw new Error(`ssh-keygen failed: ${result.error?.message ?? result.stderr.trim()}`);
}

/** Files of the bench's own sshd: a host key, a client key, the client key as the only authorized one, and the config. */
export interface SshdFiles {
  config: string;
  clientKey: string;
}

/**
 * Writes an sshd config of the bench's own (listening on 127.0.0.1:`port`, its own host key, the
 * bench's client key as the only way in, no PAM) whose sessions get `home` as HOME: bash sources
 * ~/.bashrc even for an ssh command, and the machine's own HOME must not be measured.
 */
export function prepareSshd(port: number, home: string): SshdFiles {
  if (!existsSync(SSHD)) throw new Error("openssh-server is not installed (apt-get install openssh-server)");
  if (!existsSync(PRIVSEP_DIR)) {
    if (process.getuid?.() !== 0) throw new Error(`${PRIVSEP_DIR} is missing and only root may create it (sshd needs it)`);
    mkdirSync(PRIVSEP_DIR, { mode: 0o755 });
  }
  mkdirSync(DIR, { recursive: true });
  const hostKey = join(DIR, "host_ed25519_key");
  const clientKey = join(DIR, "client_ed25519_key");
  keygen(hostKey);
  keygen(clientKey);
  const authorized = join(DIR, "authorized_keys");
  copyFileSync(`${clientKey}.pub`, authorized);
  const config = join(DIR, "sshd_config");
  const lines = [
    `Port ${port}`,
    "ListenAddress 127.0.0.1",
    `HostKey ${hostKey}`,
    "PidFile none",
    `AuthorizedKeysFile ${authorized}`,
    "PubkeyAuthentication yes",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "UsePAM no",
    // The scratch directory is not owned the way sshd wants a user's ~/.ssh to be.
    "StrictModes no",
    // The bench runs as root here; the config is the bench's own, on a loopback port, for one key.
    "PermitRootLogin yes",
    "PrintMotd no",
    "PrintLastLog no",
    "UseDNS no",
    `MaxStartups ${MAX_STARTUPS}`,
    `SetEnv HOME=${home}`,
  ];
  writeFileSync(config, `${lines.join("\n")}\n`);
  return { config, clientKey };
}
