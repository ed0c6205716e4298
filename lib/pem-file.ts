import { readFileSync } from "node:fs";
import { ConfigError } from "./cli.js";

/** The PEM file at `path` (certificates or a key), or a ConfigError naming `what` it was meant to be and why it cannot serve. */
export function readPemFile(what: string, path: string): Buffer {
  let contents: Buffer;
  try {
    contents = readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${what}: cannot read "${path}": ${(err as Error).message}`);
  }
  if (!contents.includes("-----BEGIN ")) throw new ConfigError(`${what}: "${path}" is not a PEM file (no -----BEGIN line)`);
  return contents;
}
