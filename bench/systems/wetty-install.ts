import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PEERS_DIR } from "./peer-process.js";

/** The wetty release the bench measures, installed from npm as its users install it. */
export const WETTY_VERSION = "3.2.0";
/** Where it goes: a scratch directory of its own, never a dependency of the product. */
export const WETTY_DIR = join(PEERS_DIR, `wetty-${WETTY_VERSION}`);
/** npm's install may build node-pty from source on a machine without a prebuilt binary. */
const INSTALL_TIMEOUT_MS = 300_000;

const versionOf = (name: string): string | undefined => {
  const manifest = join(WETTY_DIR, "node_modules", name, "package.json");
  return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version : undefined;
};
const major = (version: string | undefined) => version?.split(".")[0];

function npmInstall(spec: string): void {
  const result = spawnSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", WETTY_DIR, spec], { cwd: WETTY_DIR, encoding: "utf8", timeout: INSTALL_TIMEOUT_MS });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") throw new Error(`npm is not on PATH (the bench installs ${spec} with it)`);
  if (result.error) throw new Error(`npm install ${spec} failed: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`npm install ${spec} exited with ${result.status}: ${result.stderr.trim().slice(-600)}`);
}

/**
 * wetty@WETTY_VERSION and a socket.io client of its server's major version (its browser client's
 * protocol), installed into WETTY_DIR unless they already are there; returns wetty's entry point.
 */
export function installWetty(): { main: string; socketIoVersion: string } {
  mkdirSync(WETTY_DIR, { recursive: true });
  if (versionOf("wetty") !== WETTY_VERSION) npmInstall(`wetty@${WETTY_VERSION}`);
  const server = versionOf("socket.io");
  if (!server) throw new Error(`wetty@${WETTY_VERSION} installed without socket.io in ${WETTY_DIR}`);
  // The client the page loads is bundled into wetty's assets; the bench speaks the same protocol from Node.
  if (major(versionOf("socket.io-client")) !== major(server)) npmInstall(`socket.io-client@${server}`);
  return { main: join(WETTY_DIR, "node_modules", "wetty", "build", "main.js"), socketIoVersion: versionOf("socket.io-client")! };
}
