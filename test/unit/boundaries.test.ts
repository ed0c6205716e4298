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

/** What a file imports, and what the files it imports from `shared` (test/support/, lib/) import in turn. */
function importsThrough(shared: string, file: string, seen = new Set<string>()): string[] {
  return importsOf(file).flatMap((spec) => {
    const helper = spec.replace(/\.js$/, ".ts");
    if (!helper.startsWith(shared) || seen.has(helper)) return [spec];
    seen.add(helper);
    return [spec, ...importsThrough(shared, helper, seen)];
  });
}

function violations(folder: string, forbidden: (specifier: string, file: string) => boolean): string[] {
  return sourceFiles(folder).flatMap((file) => importsOf(file).filter((spec) => forbidden(spec, file)).map((spec) => `${file} imports ${spec}`));
}

/** Every circle in a graph of imports, each written "a -> b -> a". */
function circlesIn(graph: Map<string, string[]>): string[] {
  const circles: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (node: string, path: string[]): void => {
    if (state.get(node) === "done") return;
    if (state.get(node) === "visiting") {
      circles.push([...path.slice(path.indexOf(node)), node].join(" -> "));
      return;
    }
    state.set(node, "visiting");
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, "done");
  };
  for (const node of graph.keys()) visit(node, []);
  return circles;
}

/** Which files of a folder import which others of it. */
function fileGraph(folder: string): Map<string, string[]> {
  return new Map(sourceFiles(folder).map((file) => [file, importsOf(file).map((spec) => spec.replace(/\.js$/, ".ts")).filter((spec) => spec.startsWith(`${folder}/`))]));
}

/** The layer of a file inside `folder`: the subfolder it sits in, or its own name when it sits at the top. */
function layerOf(folder: string, file: string): string {
  return relative(folder, file).split("/")[0]!;
}

/** Which layers of a folder import which others, each import named by the file that makes it. */
function layerImports(folder: string): Array<{ from: string; to: string; why: string }> {
  return [...fileGraph(folder)].flatMap(([file, targets]) =>
    targets.map((target) => ({ from: layerOf(folder, file), to: layerOf(folder, target), why: `${file} imports ${target}` })).filter(({ from, to }) => from !== to),
  );
}

/** Which layers of a folder import which others. */
function layerGraph(folder: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const { from, to } of layerImports(folder)) graph.set(from, [...(graph.get(from) ?? []), to]);
  return graph;
}

/** The imports of a folder's layers that go up or sideways in `layers` (rows top to bottom), each named by the file that makes it. */
function importsAgainst(folder: string, layers: readonly (readonly string[])[]): string[] {
  const row = (layer: string): number => layers.findIndex((names) => names.includes(layer));
  return layerImports(folder)
    .filter(({ from, to }) => row(to) <= row(from))
    .map(({ why }) => why);
}

/**
 * The gateway's parts from top to bottom (docs/development.md): each may import only parts on rows
 * below its own, never beside or above it. A lower part that needs something of a higher one owns
 * an interface for it, which the higher one implements or hands in (server.ts wires the parts up).
 */
const GATEWAY_LAYERS: readonly (readonly string[])[] = [
  ["main.ts"],
  ["config.ts", "server.ts"],
  ["wire"],
  ["handlers", "backend"],
  ["terminals"],
  ["runners", "state"],
  ["auth"],
  ["metrics.ts"],
];

/**
 * The runner's layers, top to bottom. A layer imports only layers in rows below its own (never the
 * others of its row), so imports go one way: no two layers import each other, even through a third.
 */
const RUNNER_LAYERS = [
  ["main.ts"],
  ["start-runner.ts"],
  ["rpc"],
  ["terminal"],
  ["spawn"],
  ["process", "shell", "metrics.ts"],
  ["log"],
  ["runner-error.ts", "config.ts"],
];

/** Where only the runner's RPC layer and its composition root may reach: Connect, protobuf and the generated messages. */
const WIRE = /^(@connectrpc\/|@bufbuild\/|gen\/)/;
/** The runner's files allowed to speak the wire. */
const SPEAKS_WIRE = /^services\/runner\/(rpc\/|main\.ts$|start-runner\.ts$)/;

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
    expect(circlesIn(fileGraph("gateway"))).toEqual([]);
  });

  it("keeps the runner's files free of import circles", () => {
    expect(circlesIn(fileGraph("services/runner"))).toEqual([]);
  });

  it("places every folder and top-level file of the runner in its layer order", () => {
    const entries = readdirSync(join(ROOT, "services/runner")).filter((name) => name.endsWith(".ts") || statSync(join(ROOT, "services/runner", name)).isDirectory());
    expect(entries.sort()).toEqual(RUNNER_LAYERS.flat().sort());
  });

  it("keeps the runner's folders free of circles between them", () => {
    const graph = layerGraph("services/runner");
    expect(graph.size).toBeGreaterThan(5);
    expect(circlesIn(graph)).toEqual([]);
  });

  it("has the runner's layers import one way, top to bottom: rpc, terminal, spawn, then process and shell, then log", () => {
    expect(importsAgainst("services/runner", RUNNER_LAYERS)).toEqual([]);
  });

  it("lets only the runner's rpc/ and its composition root load Connect, protobuf or generated messages, even through lib/", () => {
    expect(violations("services/runner", (spec, file) => WIRE.test(spec) && !SPEAKS_WIRE.test(file))).toEqual([]);
    const throughLib = sourceFiles("services/runner")
      .filter((file) => !SPEAKS_WIRE.test(file))
      .flatMap((file) => importsThrough("lib/", file).filter((spec) => WIRE.test(spec)).map((spec) => `${file} reaches ${spec}`));
    expect(throughLib).toEqual([]);
    expect(importsOf("services/runner/rpc/connect-error.ts")).toContain("@connectrpc/connect");
  });

  it("keeps the gateway's folders free of import circles, even through a third folder", () => {
    const graph = layerGraph("gateway");
    expect(graph.get("server.ts")).toContain("wire");
    expect(graph.get("terminals")).toContain("runners");
    expect(circlesIn(graph)).toEqual([]);
  });

  it("keeps imports going down the gateway's layers, in the documented order", () => {
    const parts = readdirSync(join(ROOT, "gateway")).filter((name) => name.endsWith(".ts") || statSync(join(ROOT, "gateway", name)).isDirectory());
    expect(parts.filter((part) => !GATEWAY_LAYERS.flat().includes(part)), "every folder and top-level file has a row").toEqual([]);
    expect(importsAgainst("gateway", GATEWAY_LAYERS)).toEqual([]);
  });

  it("keeps end-to-end tests off the source: they drive the real processes over their sockets", () => {
    expect(violations("test/e2e", (spec) => spec.startsWith("services/") || spec.startsWith("gateway/"))).toEqual([]);
    const throughHelpers = sourceFiles("test/e2e").flatMap((file) =>
      importsThrough("test/support/", file).filter((spec) => spec.startsWith("services/") || spec.startsWith("gateway/")).map((spec) => `${file} reaches ${spec}`),
    );
    expect(throughHelpers).toEqual([]);
  });
});
