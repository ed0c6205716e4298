import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "./service-process.js";

const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

describe("--version", () => {
  it.each([
    ["the runner", "dist/app/services/runner/main.js"],
    ["the gateway", "dist/app/gateway/main.js"],
    ["npm start's launcher", "dist/app/launcher/main.js"],
    ["ahp-term", "bin/ahp-term.js"],
  ])("%s prints the package's version and exits 0", async (_, entry) => {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, entry), "--version"], { cwd: ROOT });
    expect(stdout).toBe(`${version}\n`);
    expect(stderr).toBe("");
  });

  it("answers before the other flags are checked", async () => {
    const { stdout } = await run(process.execPath, [join(ROOT, "dist/app/services/runner/main.js"), "--port", "nope", "--version"], { cwd: ROOT });
    expect(stdout).toBe(`${version}\n`);
  });
});
