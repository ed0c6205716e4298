import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where each service's token is kept for its process to read, and whether `npm start` made it up. */
export interface ServiceTokens {
  runnerTokenFile: string;
  gatewayTokenFile: string;
  /** Removes the files `npm start` wrote (not those it was given). */
  remove(): void;
}

/** Bytes of a generated token: 192 bits, as the services themselves generate. */
const TOKEN_BYTES = 24;

/**
 * The files the runner and the gateway read their tokens from: files given (`--runner-token-file`,
 * `--token-file` or RUNNER_TOKEN_FILE, GATEWAY_TOKEN_FILE) are used as they are; a token given in the
 * environment (RUNNER_TOKEN, GATEWAY_TOKEN), or else one made up, is written to a file of mode 600 in
 * a fresh directory of mode 700 that only this account can open. The tokens never travel in a
 * child's environment or command line, where `ps` and `/proc/<pid>/environ` would show them.
 */
export function prepareServiceTokens(given: { runnerTokenFile?: string; gatewayTokenFile?: string }, env: NodeJS.ProcessEnv): ServiceTokens {
  let directory: string | undefined;
  const write = (name: string, token: string): string => {
    directory ??= mkdtempSync(join(env.XDG_RUNTIME_DIR || tmpdir(), "ahp-terminal-"));
    const path = join(directory, name);
    writeFileSync(path, `${token}\n`, { mode: 0o600 });
    return path;
  };
  const made = (): string => randomBytes(TOKEN_BYTES).toString("base64url");
  const runnerTokenFile = given.runnerTokenFile ?? (env.RUNNER_TOKEN_FILE || write("runner-token", env.RUNNER_TOKEN || made()));
  const gatewayTokenFile = given.gatewayTokenFile ?? (env.GATEWAY_TOKEN_FILE || write("gateway-token", env.GATEWAY_TOKEN || made()));
  return {
    runnerTokenFile,
    gatewayTokenFile,
    remove: () => {
      if (directory) rmSync(directory, { recursive: true, force: true });
    },
  };
}
