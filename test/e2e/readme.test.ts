import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./runner-process.js";

/** The README's promise: a newcomer's page, not the manual. */
const README_MAX_BYTES = 15 * 1024;
/** Long enough for npm start, a runner and a dozen buf curl calls on a busy 2-core machine. */
const RUNNABLE_TIMEOUT_MS = 120_000;

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const scratch = mkdtempSync(join(tmpdir(), "readme-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Markdown with its fenced code blocks blanked out, so `#` lines and links inside them are not taken for headings. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```$/gm, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count ? `${base}-${count}` : base);
  }
  return anchors;
}

/** The shell blocks marked `<!-- runnable -->`, in order. */
function runnableBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/<!-- runnable -->\n```sh\n([\s\S]*?)```\n/g)].map(([, text]) => text!);
}

/** Runs `script` with bash in a fresh directory that sees the checkout's package, build and tools, with a scratch HOME of Debian's skeleton files. */
function runInScratch(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(scratch, "run-"));
  for (const entry of ["package.json", "node_modules", "dist", "bin"]) symlinkSync(join(ROOT, entry), join(dir, entry));
  const home = join(dir, "home");
  mkdirSync(home);
  if (existsSync("/etc/skel")) cpSync("/etc/skel", home, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, SHELL: "/bin/bash" };
  for (const name of ["RUNNER_TOKEN", "GATEWAY_TOKEN", "RUNNER_TOKEN_FILE", "GATEWAY_TOKEN_FILE", "AHP_URL", "AHP_TOKEN"]) delete env[name];
  return new Promise((done) => {
    // A process group of its own, so whatever the script leaves running can be ended with it.
    const child = spawn("bash", ["-c", `set -euo pipefail\n${script}`], { cwd: dir, env, detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), RUNNABLE_TIMEOUT_MS - 5_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        // The group is already gone.
      }
      done({ code, stdout, stderr });
    });
  });
}

/** Every output byte in the JSON documents `buf curl` and curl printed, decoded. */
function outputText(stdout: string): string {
  return [...stdout.matchAll(/"data": ?"([A-Za-z0-9+/=]*)"/g)].map(([, data]) => Buffer.from(data!, "base64").toString("utf8")).join("");
}

describe("README.md", () => {
  it(`is at most ${README_MAX_BYTES} bytes and its contents list every section`, () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(README_MAX_BYTES);
    const contents = readme.slice(readme.indexOf("## Contents"), readme.indexOf("\n## ", readme.indexOf("## Contents") + 1));
    const sections = [...prose(readme).matchAll(/^## (.+)$/gm)].map(([, heading]) => heading!).filter((heading) => heading !== "Contents");
    expect(sections.length).toBeGreaterThan(4);
    for (const section of sections) expect(contents, `the contents leave out "${section}"`).toContain(`(#${[...anchorsOf(`## ${section}`)][0]})`);
  });

  it("links only to files and headings that exist, and so does every page of docs/", () => {
    const pages = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(ROOT, page), "utf8");
      for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split("#");
        const file = path ? resolve(dirname(join(ROOT, page)), path) : join(ROOT, page);
        if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor && file.endsWith(".md") && !anchorsOf(readFileSync(file, "utf8")).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it(
    "runs every block marked runnable, as written, in order",
    async () => {
      const blocks = runnableBlocks(readme);
      expect(blocks.length).toBeGreaterThanOrEqual(3);
      const { code, stdout, stderr } = await runInScratch(blocks.join("\n"));
      expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
      // ahp-term against npm start.
      // ahp-term run passes the pty's output on as it came: lines end in \r\n.
      expect(stdout).toContain("hello from ahp-term\r\n");
      expect(stdout).toMatch(/^ahp-terminal:\/\S+\ttour\tclient:\S+\trunning$/m);
      // curl and buf curl against a runner alone.
      expect(stdout).toMatch(/^\{"terminal":\{"id":"tour",/m);
      expect(stdout).toContain("terminal.v1.TerminalService/Spawn\n");
      expect(stdout).toContain('"exitCode": 3');
      const output = outputText(stdout);
      expect(output).toContain("hello from the runner\r\n");
      // The shell's answer, right after its "command executed" mark (OSC 133;C, ended by BEL).
      expect(output).toMatch(/\x07(?:\x1b\[\?2004l\r)?42\r\n/);
    },
    RUNNABLE_TIMEOUT_MS,
  );
});

/** The examples in the tables of a page (`call …` and `npx buf curl …` cells), in order, unescaped. */
function tableExamples(markdown: string): string[] {
  return [...markdown.matchAll(/^\| [^|]+ \| `((?:call|npx buf curl) (?:[^`])*)` \|/gm)].map(([, example]) => example!.replaceAll("\\|", "|"));
}

/** Every JSON document in `buf curl`'s output (it spreads each over several lines), in order. */
function jsonDocuments(stdout: string): Array<Record<string, unknown>> {
  return stdout.split(/\n(?=\{)/).map((text) => text.trim()).filter((text) => text.startsWith("{")).map((text) => JSON.parse(text) as Record<string, unknown>);
}

describe("docs/", () => {
  const pages = readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md"));

  it(
    "runs every block marked runnable in each page, as written, in order",
    async () => {
      const runnable = pages.filter((page) => page !== "runner-api.md" && runnableBlocks(readFileSync(join(ROOT, "docs", page), "utf8")).length > 0);
      expect(runnable).toContain("gateway.md");
      for (const page of runnable) {
        const { code, stdout, stderr } = await runInScratch(runnableBlocks(readFileSync(join(ROOT, "docs", page), "utf8")).join("\n"));
        expect(code, `${page}\nstdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
      }
    },
    RUNNABLE_TIMEOUT_MS,
  );

  it(
    "runs runner-api.md's examples in order, top to bottom: its runnable blocks, every example of the RPC table, and the Events section's Attach after the Signal",
    async () => {
      const page = readFileSync(join(ROOT, "docs/runner-api.md"), "utf8");
      const examples = tableExamples(page);
      expect(examples.map((example) => /TerminalService\/(\w+)|^call (\w+)|Health\/(\w+)/.exec(example)!.slice(1).find(Boolean))).toEqual([
        "Spawn", "Attach", "Write", "Resize", "Signal", "Clear", "SetLabels", "Get", "List", "GetScreen", "Close", "Check",
      ]);
      const eventsAttach = /After the `Signal` above, `(call Attach [^`]+)`/.exec(page)![1]!;
      const steps = examples.flatMap((example) => (example.startsWith("call Signal") ? [example, eventsAttach] : [example]));
      // Each step's output follows a marker line, so it can be told apart.
      const script = [...runnableBlocks(page), ...steps.flatMap((step, index) => [`echo '=== ${index}'`, step])].join("\n");
      const { code, stdout, stderr } = await runInScratch(script);
      expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
      const outputs = stdout.split(/^=== \d+\n/m).slice(1);
      expect(outputs).toHaveLength(steps.length);
      const events = jsonDocuments(outputs[steps.indexOf(eventsAttach)]!);
      const documented = [...page.matchAll(/^```json\n([\s\S]*?)```$/gm)][0]![1]!.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
      const text = (docs: Array<Record<string, unknown>>) => docs.map((doc) => Buffer.from((doc.output as { data?: string } | undefined)?.data ?? "", "base64").toString()).join("");
      expect(text(events)).toBe(text(documented));
      expect(events.at(-1)).toEqual(documented.at(-1));
      expect(jsonDocuments(outputs[steps.findIndex((step) => step.startsWith("call List"))]!)[0]).toMatchObject({ terminals: [{ id: "demo", labels: { stage: "test" } }] });
      // The screen is the one Clear left (empty fields are left out of JSON), at the size Resize set.
      const screen = jsonDocuments(outputs[steps.findIndex((step) => step.startsWith("call GetScreen"))]!)[0] as { data?: string; cols: number; rows: number };
      expect({ cols: screen.cols, rows: screen.rows }).toEqual({ cols: 120, rows: 40 });
      expect(screen.data ?? "").not.toContain("hello world");
    },
    RUNNABLE_TIMEOUT_MS,
  );
});
