import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSecretFile } from "../../../lib/secret-file.js";

const dir = mkdtempSync(join(tmpdir(), "secret-file-"));
const file = (name: string, text: string, mode = 0o600): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
};

describe("readSecretFile", () => {
  it("reads the secret without its trailing newline, quietly for a private file", () => {
    expect(readSecretFile("--token-file", file("a", "s3cret\n"))).toEqual({ secret: "s3cret" });
    expect(readSecretFile("--token-file", file("b", "s3cret\r\n"))).toEqual({ secret: "s3cret" });
  });

  it("warns about a file others can read", () => {
    expect(readSecretFile("--token-file", file("c", "s3cret", 0o644)).warning).toMatch(/readable by its group or others \(mode 644\)/);
  });

  it("refuses a missing, empty or multi-line file, naming the flag", () => {
    expect(() => readSecretFile("--token-file", join(dir, "nope"))).toThrow(/--token-file: cannot read ".*nope": ENOENT/);
    expect(() => readSecretFile("--runner-token-file", file("d", "\n"))).toThrow(/--runner-token-file: ".*" is empty/);
    expect(() => readSecretFile("--token-file", file("e", "one\ntwo\n"))).toThrow(/more than one line/);
  });
});
