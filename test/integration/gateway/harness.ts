import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUTH_RESOURCE, tokenHolderAccess, usersFileAccess } from "../../../gateway/auth/access.js";
import { UserDirectory } from "../../../gateway/auth/user-directory.js";
import { writeUsersFile, type UsersFile } from "../../../gateway/auth/users-file.js";
import { connectRunner } from "../../../gateway/runners/runner-client.js";
import { RunnerPool } from "../../../gateway/runners/runner-pool.js";
import { startGateway, type Gateway } from "../../../gateway/server.js";
import type { SocketLimits } from "../../../gateway/wire/socket-limits.js";
import { DEFAULT_SOCKET_LIMITS } from "../../../gateway/wire/socket-limits.js";
import { createLogger, type Logger } from "../../../lib/logger.js";
import type { TerminalLimits } from "../../../gateway/terminals/terminal-quota.js";
import { startTestRunner, type TestRunner, type TestRunnerOptions } from "../runner/harness.js";
import { useStarted } from "../../support/use-started.js";

/** A gateway on port 0 in this process, in front of a real in-process runner with real ptys. */
export interface TestGateway {
  url: string;
  token: string;
  runner: TestRunner;
  /** The gateway's pool (undefined for a host without runners). */
  runners: RunnerPool | undefined;
  gateway: Gateway;
  home: string;
  close(): Promise<void>;
}

/** Options of a test gateway: its limits, the terminals' shell, and a users file (else the token holder is a member). */
export interface TestGatewayOptions {
  /** False: a host that serves no terminals. */
  withRunner?: boolean;
  onTerminalExit?: (cwd: string) => void;
  scrollbackChars?: number;
  maxFrameBytes?: number;
  shell?: string;
  usersFile?: string;
  /** False: the runner's record is not watched (a test feeds the gateway's terminals itself). */
  watchRunners?: boolean;
  /** How long a terminal nobody reads is still followed (default: the gateway's). */
  followGraceMs?: number;
  /** How many terminals a connection and a person may have open (default: the gateway's). */
  terminalLimits?: TerminalLimits;
  /** The Unix account the host's own terminals run as. */
  hostTerminalUser?: string;
  /** Socket deadlines, pings and connection counts that differ from the gateway's defaults. */
  socketLimits?: Partial<SocketLimits>;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** True to serve the browser console's files (as built in dist/console). */
  console?: boolean;
  /** Where the gateway logs (default: nowhere). */
  log?: Logger;
  /** Options of the runner started for the gateway (its run-as policy, how much output it retains). */
  runner?: Pick<TestRunnerOptions, "runAs" | "retainBytes">;
}

/** Starts runner and gateway; terminals run /bin/sh (or `shell`) with a scratch HOME, so no rc file of this machine is read. */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const home = mkdtempSync(join(tmpdir(), "gateway-home-"));
  const runner = await startTestRunner({ env: { ...process.env, SHELL: options.shell ?? "/bin/sh", HOME: home, ENV: "", PS1: "$ " }, ...options.runner });
  return startGatewayOn(runner, home, options);
}

/**
 * A test gateway and its runner for the tests around the call (the file, or the `describe` it is called
 * in): started before them, closed after them. `options` may be a function, called when they start.
 */
export function useTestGateway(options: TestGatewayOptions | (() => TestGatewayOptions) = {}): TestGateway {
  return useStarted("the test gateway", () => startTestGateway(typeof options === "function" ? options() : options), (gateway) => gateway.close());
}

/** A gateway in front of runners that already run (as a restarted gateway, or another replica, would be); the first is the one `runner` names. */
export async function startGatewayOn(on: TestRunner | TestRunner[], home: string, options: TestGatewayOptions = {}): Promise<TestGateway> {
  const log = options.log ?? createLogger("silent", "gateway");
  const all = Array.isArray(on) ? on : [on];
  const runner = all[0]!;
  const runners = options.withRunner === false ? undefined : await RunnerPool.create(all.map((each) => each.server.url), { connect: (url) => connectRunner(url, runner.token), log });
  const token = "gateway-token";
  const gateway = await startGateway({
    host: "127.0.0.1",
    port: 0,
    token,
    maxFrameBytes: options.maxFrameBytes ?? 1024 * 1024,
    socketLimits: { ...DEFAULT_SOCKET_LIMITS, ...options.socketLimits },
    allowedHosts: options.allowedHosts,
    allowedOrigins: options.allowedOrigins,
    access: options.usersFile ? usersFileAccess(new UserDirectory(options.usersFile, log), AUTH_RESOURCE) : tokenHolderAccess(token, AUTH_RESOURCE),
    runners,
    log,
    shell: "/bin/bash",
    onTerminalExit: options.onTerminalExit,
    scrollbackChars: options.scrollbackChars ?? 200_000,
    defaultDirectory: home,
    version: "test",
    console: options.console ?? false,
    watchRunners: options.watchRunners,
    followGraceMs: options.followGraceMs,
    terminalLimits: options.terminalLimits,
    hostTerminalUser: options.hostTerminalUser,
  });
  return {
    url: gateway.url,
    token,
    runner,
    runners,
    gateway,
    home,
    async close() {
      await gateway.close();
      await runner.close();
    },
  };
}

/** A users file in a fresh temporary directory (for `usersFile`), holding `file`: its path. */
export function usersFileWith(file: Pick<UsersFile, "users"> & Partial<UsersFile>, prefix = "users-"): string {
  const path = join(mkdtempSync(join(tmpdir(), prefix)), "users.json");
  writeUsersFile(path, { roles: {}, ...file });
  return path;
}
