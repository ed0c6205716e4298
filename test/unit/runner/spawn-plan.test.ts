import { mkdtempSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planSpawn, type SpawnOptions } from "../../../services/runner/spawn/spawn-plan.js";

const host = { env: { PATH: "/usr/bin:/bin", SHELL: "/bin/bash", HOME: "/root", TERM: "screen" }, cwd: "/" };
const options = (overrides: Partial<SpawnOptions> = {}): SpawnOptions => ({
  argv: [],
  command: "",
  shell: "",
  cwd: "",
  env: {},
  cols: 80,
  rows: 24,
  isPty: true,
  title: "",
  ...overrides,
});

describe("planSpawn", () => {
  it("runs argv exactly as given, without a shell", () => {
    const plan = planSpawn(options({ argv: ["ls", "-la", "a b"] }), host);
    expect([plan.file, ...plan.args]).toEqual(["ls", "-la", "a b"]);
    expect(plan.title).toBe("ls");
    expect(plan.failure).toBeUndefined();
  });

  it("hands a command line to the shell as is", () => {
    const plan = planSpawn(options({ command: "echo $HOME | wc -c" }), host);
    expect([plan.file, ...plan.args]).toEqual(["/bin/bash", "-c", "echo $HOME | wc -c"]);
  });

  it("starts an interactive shell when neither is given: the request's shell, else $SHELL, else /bin/sh", () => {
    expect(planSpawn(options({ shell: "/bin/sh" }), host).file).toBe("/bin/sh");
    expect(planSpawn(options(), host).file).toBe("/bin/bash");
    expect(planSpawn(options(), { ...host, env: { PATH: "/bin" } }).file).toBe("/bin/sh");
    expect(planSpawn(options({ isPty: false }), host).args).toEqual(["-i"]);
  });

  it("layers the environment: runner, then caller, then the terminal's own TERM, COLUMNS and LINES", () => {
    const plan = planSpawn(options({ env: { HOME: "/home/x", FOO: "1", TERM: "vt100", COLUMNS: "1" }, cols: 120, rows: 40 }), host);
    expect(plan.env).toMatchObject({ PATH: "/usr/bin:/bin", HOME: "/home/x", FOO: "1", TERM: "screen", COLUMNS: "120", LINES: "40" });
  });

  it("keeps the services' tokens out of a terminal's environment", () => {
    const secretHost = { ...host, env: { ...host.env, RUNNER_TOKEN: "runner-secret", GATEWAY_TOKEN: "gateway-secret" } };
    const { env } = planSpawn(options({ argv: ["sh"] }), secretHost);
    expect(env).not.toHaveProperty("RUNNER_TOKEN");
    expect(env).not.toHaveProperty("GATEWAY_TOKEN");
    expect(env.PATH).toBe("/usr/bin:/bin");
  });

  it("keeps the runner's own malloc tunables out of a terminal's environment, and the rest of GLIBC_TUNABLES in", () => {
    const tuned = (value: string) => planSpawn(options({ argv: ["sh"] }), { ...host, env: { ...host.env, GLIBC_TUNABLES: value } }).env;
    expect(tuned("glibc.malloc.hugetlb=1")).not.toHaveProperty("GLIBC_TUNABLES");
    expect(tuned("glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1").GLIBC_TUNABLES).toBe("glibc.malloc.arena_max=4");
    // What the caller asks for is set as asked.
    expect(planSpawn(options({ argv: ["sh"], env: { GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" } }), host).env.GLIBC_TUNABLES).toBe("glibc.malloc.hugetlb=1");
  });

  it("uses xterm-256color under a pty when the runner has no TERM (or a dumb one), and dumb on pipes", () => {
    expect(planSpawn(options(), { ...host, env: { PATH: "/bin" } }).env.TERM).toBe("xterm-256color");
    expect(planSpawn(options(), { ...host, env: { PATH: "/bin", TERM: "dumb" } }).env.TERM).toBe("xterm-256color");
    expect(planSpawn(options({ isPty: false }), host).env.TERM).toBe("dumb");
  });

  it("plans a failure with exit code 127 for a missing directory instead of refusing", () => {
    const plan = planSpawn(options({ cwd: "/no/such/dir" }), host);
    expect(plan.failure).toEqual({ message: "cannot start in /no/such/dir: no such file or directory", exitCode: 127 });
  });

  it("plans a failure with 127 for a program not in PATH and 126 for one that is not executable", () => {
    expect(planSpawn(options({ argv: ["no-such-program-xyz"] }), host).failure).toEqual({
      message: "cannot run no-such-program-xyz: command not found",
      exitCode: 127,
    });
    const dir = mkdtempSync(join(tmpdir(), "plan-"));
    writeFileSync(join(dir, "script"), "#!/bin/sh\n");
    chmodSync(join(dir, "script"), 0o644);
    expect(planSpawn(options({ argv: ["./script"], cwd: dir }), host).failure?.exitCode).toBe(126);
    expect(planSpawn(options({ argv: [dir] }), host).failure).toMatchObject({ exitCode: 126 });
  });

  it("refuses a relative working directory", () => {
    expect(() => planSpawn(options({ cwd: "relative/dir" }), host)).toThrow(/absolute/);
  });
});
