import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { entryArgs } from "../../../launcher/supervised.js";
import { nodeOptionsFor, SERVICE_MALLOC_TUNABLES, SERVICE_NODE_OPTIONS, serviceTunables, withoutServiceTunables, withServiceTunables } from "../../../lib/service-node-options.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;

/** The node options a command line gives before the compiled entry point `dist/app/<entry>.js`. */
function optionsBefore(words: string[], entry: string): string[] {
  const at = words.indexOf(`dist/app/${entry}.js`);
  expect(at, `${entry} in ${words.join(" ")}`).toBeGreaterThan(0);
  return words.slice(words.indexOf("node") + 1, at);
}

/** The ENTRYPOINT of a Dockerfile, as its JSON array. */
const entrypointOf = (file: string): string[] => JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(join(ROOT, file), "utf8"))![1]!) as string[];

describe("service node options", () => {
  it("are what the package scripts start each service with", () => {
    expect(optionsBefore(scripts.runner!.split(" "), "services/runner/main")).toEqual(SERVICE_NODE_OPTIONS["services/runner/main"]);
    expect(optionsBefore(scripts.gateway!.split(" "), "gateway/main")).toEqual(SERVICE_NODE_OPTIONS["gateway/main"]);
    expect(optionsBefore(scripts.start!.split(" "), "launcher/main")).toEqual(SERVICE_NODE_OPTIONS["launcher/main"]);
  });

  it("are what the container images start each service with", () => {
    expect(optionsBefore(entrypointOf("deploy/runner.Dockerfile"), "services/runner/main")).toEqual(SERVICE_NODE_OPTIONS["services/runner/main"]);
    expect(optionsBefore(entrypointOf("deploy/gateway.Dockerfile"), "gateway/main")).toEqual(SERVICE_NODE_OPTIONS["gateway/main"]);
  });

  it("are what the launcher starts its children with, compiled or from source", () => {
    for (const entry of ["services/runner/main", "gateway/main"] as const) {
      const args = entryArgs(entry);
      expect(args.slice(0, SERVICE_NODE_OPTIONS[entry].length)).toEqual(SERVICE_NODE_OPTIONS[entry]);
    }
  });

  it("give the runner and the gateway a larger first old generation and an earlier tier-up, and nothing for unknown entries", () => {
    expect(nodeOptionsFor("services/runner/main")).toContain("--initial-old-space-size=128");
    expect(nodeOptionsFor("gateway/main")).toContain("--initial-old-space-size=64");
    for (const entry of ["services/runner/main", "gateway/main"]) expect(nodeOptionsFor(entry)).toContain("--interrupt-budget=16896");
    expect(nodeOptionsFor("cli/main")).toEqual([]);
  });

  it("start both services with malloc's tunables: the package scripts and the container images", () => {
    expect(SERVICE_MALLOC_TUNABLES).toEqual(["glibc.malloc.hugetlb=1"]);
    for (const script of [scripts.runner!, scripts.gateway!]) expect(script.startsWith(`GLIBC_TUNABLES=${SERVICE_MALLOC_TUNABLES.join(":")}\${GLIBC_TUNABLES:+:$GLIBC_TUNABLES} exec node `)).toBe(true);
    for (const file of ["deploy/runner.Dockerfile", "deploy/gateway.Dockerfile"]) expect(readFileSync(join(ROOT, file), "utf8")).toContain(`ENV GLIBC_TUNABLES=${SERVICE_MALLOC_TUNABLES.join(":")}\n`);
  });

  it("give the package scripts' services what the launcher gives them: a tunable given keeps its value", () => {
    // glibc reads the items in order, a later one overriding an earlier one of the same name.
    const effective = (value: string) => new Map(value.split(":").filter(Boolean).map((item) => item.split("=") as [string, string]));
    for (const script of [scripts.runner!, scripts.gateway!]) {
      const assignment = script.slice(0, script.indexOf(" exec "));
      for (const given of [undefined, "glibc.malloc.arena_max=4", "glibc.malloc.hugetlb=0", "glibc.malloc.hugetlb=0:glibc.malloc.arena_max=4"]) {
        const env = { PATH: process.env.PATH, ...(given === undefined ? {} : { GLIBC_TUNABLES: given }) };
        const value = execFileSync("sh", ["-c", `${assignment}; printf %s "$GLIBC_TUNABLES"`], { env, encoding: "utf8" });
        expect(effective(value)).toEqual(effective(serviceTunables(given)));
      }
    }
  });

  it("add the services' tunables to those given, a name given keeping its value, and take them out again for children", () => {
    expect(serviceTunables(undefined)).toBe("glibc.malloc.hugetlb=1");
    expect(serviceTunables("")).toBe("glibc.malloc.hugetlb=1");
    expect(serviceTunables("glibc.malloc.arena_max=2")).toBe("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
    expect(serviceTunables("glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2")).toBe("glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2");
    expect(withServiceTunables({ LANG: "C", GLIBC_TUNABLES: "glibc.malloc.arena_max=2" })).toEqual({ LANG: "C", GLIBC_TUNABLES: "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1" });
    expect(withoutServiceTunables("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1")).toBe("glibc.malloc.arena_max=2");
    expect(withoutServiceTunables("glibc.malloc.hugetlb=1")).toBeUndefined();
    expect(withoutServiceTunables(undefined)).toBeUndefined();
    // A value the caller chose is theirs: only the services' own is taken out.
    expect(withoutServiceTunables("glibc.malloc.hugetlb=0")).toBe("glibc.malloc.hugetlb=0");
  });
});
