import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../lib/package-root.js";

const read = (name: string): string => readFileSync(join(PACKAGE_ROOT, name), "utf8");

describe("the licence", () => {
  it("is the full Apache-2.0 text, with the authors' copyright line, and package.json and its lock say so", () => {
    const license = read("LICENSE");
    expect(license).toMatch(/^\s+Apache License\n\s+Version 2\.0, January 2004\n\s+http:\/\/www\.apache\.org\/licenses\/\n/);
    expect(license).toContain("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION");
    expect(license).toContain("END OF TERMS AND CONDITIONS");
    expect(license).toMatch(/^ {3}Copyright \d{4} The ahp-terminal-service Authors$/m);
    expect(license).not.toContain("[name of copyright owner]");
    expect((JSON.parse(read("package.json")) as { license?: string }).license).toBe("Apache-2.0");
    expect((JSON.parse(read("package-lock.json")) as { packages: Record<string, { license?: string }> }).packages[""]!.license).toBe("Apache-2.0");
  });
});
