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
    expect(sourceFiles("services/runner")).toContain("services/runner/process/pty.ts");
    expect(importsOf("services/runner/process/pty.ts")).toContain("node-pty");
    expect(importsOf("services/runner/rpc/server.ts")).toContain("gen/terminal/v1/terminal_pb.js");
  });

  it("keeps the runner free of ws, AHP and anything of the gateway", () => {
    const found = violations("services", (spec) => spec === "ws" || spec.startsWith("gateway/") || /ahp/i.test(spec));
    expect(found).toEqual([]);
  });

  it("lets only services/runner/process/pty.ts import node-pty", () => {
    const found = [...violations("services", (spec, file) => spec === "node-pty" && file !== "services/runner/process/pty.ts"), ...violations("gateway", (spec) => spec === "node-pty")];
    expect(found).toEqual([]);
  });

  it("keeps the gateway off the runner's source: it reaches the runner only through gen/", () => {
    expect(violations("gateway", (spec) => spec.startsWith("services/"))).toEqual([]);
  });

  it("keeps connect-node in one file on each side, and ws in gateway/wire/listener.ts", () => {
    expect(violations("gateway", (spec, file) => spec === "@connectrpc/connect-node" && file !== "gateway/runners/runner-client.ts")).toEqual([]);
    expect(violations("services", (spec, file) => spec === "@connectrpc/connect-node" && file !== "services/runner/rpc/server.ts")).toEqual([]);
    expect(violations("gateway", (spec, file) => spec === "ws" && file !== "gateway/wire/listener.ts")).toEqual([]);
    expect(importsOf("gateway/runners/runner-client.ts")).toContain("@connectrpc/connect-node");
    expect(importsOf("services/runner/rpc/server.ts")).toContain("@connectrpc/connect-node");
    expect(importsOf("gateway/wire/listener.ts")).toContain("ws");
  });

  it("keeps ahp/ pure: the protocol imports nothing but itself (no Node, no ws, no gateway)", () => {
    expect(sourceFiles("ahp").length).toBeGreaterThan(5);
    expect(violations("ahp", (spec) => !spec.startsWith("ahp/"))).toEqual([]);
  });

  it("keeps lib/ shared: it imports neither side, nor the protocol", () => {
    expect(sourceFiles("lib").length).toBeGreaterThan(3);
    const sides = /^(services|gateway|ahp|console|cli|bench|launcher|test)\//;
    expect(violations("lib", (spec) => sides.test(spec))).toEqual([]);
  });

  it("lets the console, ahp-term and the benchmarks reach the gateway only over the wire", () => {
    for (const folder of ["console", "cli", "bench"]) {
      expect(sourceFiles(folder).length, folder).toBeGreaterThan(0);
      expect(violations(folder, (spec) => spec.startsWith("gateway/") || spec.startsWith("services/"))).toEqual([]);
    }
  });

  it("keeps the gateway's layers free of import circles", () => {
    const graph = new Map(sourceFiles("gateway").map((file) => [file, importsOf(file).map((spec) => spec.replace(/\.js$/, ".ts")).filter((spec) => spec.startsWith("gateway/"))]));
    const circles: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "visiting") {
        circles.push([...path.slice(path.indexOf(file)), file].join(" -> "));
        return;
      }
      state.set(file, "visiting");
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, "done");
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it("keeps end-to-end tests off the source: they drive the real processes over their sockets", () => {
    expect(violations("test/e2e", (spec) => spec.startsWith("services/") || spec.startsWith("gateway/"))).toEqual([]);
    const throughHelpers = sourceFiles("test/e2e").flatMap((file) =>
      importsThroughSupport(file).filter((spec) => spec.startsWith("services/") || spec.startsWith("gateway/")).map((spec) => `${file} reaches ${spec}`),
    );
    expect(throughHelpers).toEqual([]);
  });
});
