import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "node_modules/.bin");
const scratch = mkdtempSync(join(tmpdir(), "buf-gen-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function buf(args: string[]): string {
  // protoc-gen-es is found on PATH, as under `npm run`.
  return execFileSync(join(BIN, "buf"), args, { cwd: ROOT, encoding: "utf8", env: { ...process.env, PATH: `${BIN}:${process.env.PATH}` } });
}

function filesBelow(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (current: string): void => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, "utf8"));
    }
  };
  walk(dir);
  return files;
}

describe("the proto contract", () => {
  it("passes buf lint (STANDARD)", () => {
    expect(() => buf(["lint"])).not.toThrow();
  });

  it("has gen/ exactly as buf generate makes it", () => {
    buf(["generate", "--output", scratch]);
    const generated = filesBelow(join(scratch, "gen"));
    const committed = filesBelow(join(ROOT, "gen"));
    expect([...committed.keys()].sort()).toEqual([...generated.keys()].sort());
    for (const [path, text] of generated) expect(committed.get(path), `gen/${path} is stale: run npm run generate`).toBe(text);
  });
});
