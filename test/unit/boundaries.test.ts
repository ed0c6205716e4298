import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/** Every TypeScript file below a folder of the repository. */
function sourceFiles(folder: string): string[] {
  const dir = join(ROOT, folder);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(relative(ROOT, path));
    return name.endsWith(".ts") ? [relative(ROOT, path)] : [];
  });
}

/** What a file imports: static and dynamic imports, re-exports, require() and createRequire(...)(...) calls, resolved when relative. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const pattern = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|\)\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;
  return [...text.matchAll(pattern)].map(([, specifier]) =>
    specifier!.startsWith(".") ? relative(ROOT, resolve(join(ROOT, file, ".."), specifier!)) : specifier!,
  );
}

/** What a file imports, and what the shared test helpers it imports import in turn. */
function importsThroughSupport(file: string, seen = new Set<string>()): string[] {
  return importsOf(file).flatMap((spec) => {
    const helper = spec.replace(/\.js$/, ".ts");
    if (!helper.startsWith("test/support/") || seen.has(helper)) return [spec];
    seen.add(helper);
    return [spec, ...importsThroughSupport(helper, seen)];
  });
}

function violations(folder: string, forbidden: (specifier: string, file: string) => boolean): string[] {
  return sourceFiles(folder).flatMap((file) => importsOf(file).filter((spec) => forbidden(spec, file)).map((spec) => `${file} imports ${spec}`));
}

describe("module boundaries", () => {
  it("finds the files it checks (the scan itself works)", () => {
    expect(sourceFiles("services/runner")).toContain("services/runner/pty.ts");
    expect(importsOf("services/runner/pty.ts")).toContain("node-pty");
    expect(importsOf("services/runner/server.ts")).toContain("gen/terminal/v1/terminal_pb.js");
  });

  it("keeps the runner free of ws, AHP and anything of the gateway", () => {
    const found = violations("services", (spec) => spec === "ws" || spec.startsWith("gateway/") || /ahp/i.test(spec));
    expect(found).toEqual([]);
  });

  it("lets only services/runner/pty.ts import node-pty", () => {
    const found = [...violations("services", (spec, file) => spec === "node-pty" && file !== "services/runner/pty.ts"), ...violations("gateway", (spec) => spec === "node-pty")];
    expect(found).toEqual([]);
  });

  it("keeps the gateway off the runner's source: it reaches the runner only through gen/", () => {
    expect(violations("gateway", (spec) => spec.startsWith("services/"))).toEqual([]);
  });

  it("keeps connect-node in gateway/runner-client.ts and ws in gateway/listener.ts", () => {
    expect(violations("gateway", (spec, file) => spec === "@connectrpc/connect-node" && file !== "gateway/runner-client.ts")).toEqual([]);
    expect(violations("gateway", (spec, file) => spec === "ws" && file !== "gateway/listener.ts")).toEqual([]);
    expect(importsOf("gateway/runner-client.ts")).toContain("@connectrpc/connect-node");
    expect(importsOf("gateway/listener.ts")).toContain("ws");
  });

  it("keeps end-to-end tests off the source: they drive the real processes over their sockets", () => {
    expect(violations("test/e2e", (spec) => spec.startsWith("services/") || spec.startsWith("gateway/"))).toEqual([]);
    const throughHelpers = sourceFiles("test/e2e").flatMap((file) =>
      importsThroughSupport(file).filter((spec) => spec.startsWith("services/") || spec.startsWith("gateway/")).map((spec) => `${file} reaches ${spec}`),
    );
    expect(throughHelpers).toEqual([]);
  });
});
