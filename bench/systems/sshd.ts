import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { BASH_INTEGRATION, BENCH_HOME, descendantsOf, shellEnv } from "../support.js";
import { OutputRelay } from "./output-relay.js";
import { freePort, startPeer } from "./peer-process.js";
import { SSHD, prepareSshd } from "./sshd-setup.js";
import type { Program, TerminalSystem } from "./terminal-system.js";

/** The processes of sshd: the listener and the ones it forks for each connection (Debian 12's 9.2 names them all sshd; later releases sshd-session and sshd-auth). */
const SSHD_NAMES = new Set(["sshd", "sshd-session", "sshd-auth"]);

/** What each terminal's ssh command runs in the session: the same programs as every system, in the scratch HOME sshd gives the session. */
const COMMANDS: Record<Program, string> = {
  bash: `cd && exec bash --rcfile '${BASH_INTEGRATION}'`,
  sh: "cd && exec env PS1='$ ' ENV= /bin/sh",
  yes: "exec yes",
};

const nameOf = (pid: number): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return undefined;
  }
};

/**
 * Debian's sshd in the foreground on a free loopback port, with its own keys and config
 * (sshd-setup.ts); each terminal is an `ssh -tt` client in a child of the bench, its stdin and
 * stdout piped. Its serving processes ("sshd") are the listener and every sshd process under it,
 * the shells left out; the ssh clients are counted apart ("sshClient").
 */
export async function sshd(): Promise<TerminalSystem & { version: string }> {
  const port = await freePort();
  const { config, clientKey } = prepareSshd(port, BENCH_HOME);
  const version = spawnSync(SSHD, ["-V"], { encoding: "utf8" }).stderr.trim();
  const server = await startPeer(SSHD, ["-D", "-e", "-f", config], port, {});
  const clients = new Set<ChildProcess>();
  const listener = server.child.pid!;
  const sshArgs = ["-tt", "-F", "/dev/null", "-p", String(port), "-i", clientKey, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes"];
  // A throwaway host key and no known_hosts, as with a new server; no escape character, so no input byte is taken by ssh.
  sshArgs.push("-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "EscapeChar=none", "127.0.0.1");
  return {
    version,
    processes: () => ({ sshd: [listener, ...descendantsOf(listener).filter((pid) => SSHD_NAMES.has(nameOf(pid) ?? ""))] }),
    clients: () => ({ sshClient: [...clients].map((child) => child.pid!).filter(Boolean) }),
    open: async (program) => {
      const child = spawn("ssh", [...sshArgs, COMMANDS[program]], { env: shellEnv("/bin/bash"), stdio: ["pipe", "pipe", "pipe"] });
      clients.add(child);
      const relay = new OutputRelay();
      child.stdout!.setEncoding("utf8").on("data", (text: string) => relay.push(text));
      let stderr = "";
      child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr += text));
      const exited = new Promise<void>((done) => child.once("exit", () => (clients.delete(child), done())));
      const failed = new Promise<never>((_, fail) => child.once("exit", (code) => fail(new Error(`ssh exited with ${code}: ${stderr.trim()}`))));
      failed.catch(() => {});
      // The terminal is there once its shell printed something; an ssh that exits first could not connect.
      await Promise.race([relay.firstOutput, failed]);
      return {
        send: (text) => void child.stdin!.write(text),
        output: relay.output,
        firstOutput: relay.firstOutput,
        // sshd ends the session (and hangs up its shell) when the connection closes.
        close: async () => {
          child.kill("SIGTERM");
          await exited;
        },
      };
    },
    stop: async () => {
      for (const child of clients) child.kill("SIGTERM");
      await server.stop();
    },
  };
}
