import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TerminalService } from "../../gen/terminal/v1/terminal_pb.js";
import { http2ConnectOptionsFromTlsFiles } from "../../lib/tls-client-options.js";
import { useTestCertificates } from "../support/test-certificates.js";
import { ROOT, useRunnerProcess } from "./runner-process.js";

const run = promisify(execFile);
const TOKEN = "recipe-token";

/** One recipe of docs/runner.md: its blocks in order, each a shell fragment or a file to write. */
type Block = { file?: string; text: string };

/** The blocks marked `<!-- recipe: NAME [file=PATH] -->` in docs/runner.md, grouped by recipe. */
function recipesOf(markdown: string): Map<string, Block[]> {
  const recipes = new Map<string, Block[]>();
  for (const [, name, file, text] of markdown.matchAll(/<!-- recipe: ([\w-]+)(?: file=(\S+))? -->\n```\w*\n([\s\S]*?)```\n/g)) {
    recipes.set(name!, [...(recipes.get(name!) ?? []), { file, text: text! }]);
  }
  return recipes;
}

/** The blocks as one bash script: shell fragments as they are, files written where the script stands at that point. */
function scriptOf(blocks: Block[]): string {
  return ["set -euo pipefail", ...blocks.map(({ file, text }) => (file ? `cat > '${file}' <<'RECIPE_FILE_END'\n${text}RECIPE_FILE_END` : text))].join("\n");
}

function has(command: string, args: string[] = ["--version"]): boolean {
  return spawnSync(command, args, { stdio: "ignore" }).status === 0;
}

const recipes = recipesOf(readFileSync(join(ROOT, "docs/runner.md"), "utf8"));
const pythonReady = has("protoc") && existsSync("/usr/bin/grpc_python_plugin") && has("/usr/bin/python3", ["-c", "import grpc, google.protobuf"]);
const goReady = has("go", ["version"]) && has("protoc-gen-go") && has("protoc-gen-go-grpc") && existsSync("/usr/share/gocode/src/google.golang.org/grpc");
for (const [name, ready, packages] of [
  ["python", pythonReady, "protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf"],
  ["go", goReady, "golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev"],
] as const) {
  if (!ready) console.warn(`docs/runner.md's ${name} recipe is skipped: apt-get install ${packages} to run it`);
}

const scratch = mkdtempSync(join(tmpdir(), "runner-recipes-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const certs = useTestCertificates();
const env = { RUNNER_TOKEN: TOKEN, HOME: scratch };
const runner = useRunnerProcess(["--port", "0"], env);
const tlsRunner = useRunnerProcess(() => ["--port", "0", "--tls-cert", certs.serverCert, "--tls-key", certs.serverKey, "--tls-client-ca", certs.caCert], env);
beforeAll(async () => {
  // So the TLS runner has a terminal for curl's List to show.
  const nodeOptions = http2ConnectOptionsFromTlsFiles({ ca: certs.caCert, cert: certs.clientCert, key: certs.clientKey });
  await createClient(TerminalService, createGrpcTransport({ baseUrl: tlsRunner.url, nodeOptions })).spawn({ id: "recipes-tls", argv: ["true"] }, { headers: { authorization: `Bearer ${TOKEN}` } });
});

/** Runs one recipe in a fresh directory (or `cwd`) with the variables the page names, and returns its stdout. */
async function runRecipe(name: string, setup: (dir: string) => void = () => {}, cwd?: string): Promise<string> {
  const blocks = recipes.get(name);
  if (!blocks) throw new Error(`docs/runner.md has no "${name}" recipe`);
  const dir = mkdtempSync(join(scratch, `${name}-`));
  setup(dir);
  const env = {
    ...process.env,
    HOME: dir,
    // Go's build cache outlives the run, so only the first run compiles gRPC.
    GOCACHE: join(tmpdir(), "runner-recipes-go-build"),
    PROTO: join(ROOT, "proto"),
    R: runner.url,
    T: TOKEN,
    RS: tlsRunner.url,
    CA: certs.caCert,
    CERT: certs.clientCert,
    KEY: certs.clientKey,
  };
  const { stdout } = await run("bash", ["-c", scriptOf(blocks)], { cwd: cwd ?? dir, env, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

const twice = (text: string): RegExp => new RegExp(`${text}[\\s\\S]*${text}`);

describe("the calling recipes of docs/runner.md, run as written", () => {
  it("finds every recipe it runs", () => {
    expect([...recipes.keys()].sort()).toEqual(["buf-curl", "curl", "go", "python", "typescript"]);
  });

  it("curl: unary JSON, a streaming Attach, and mutual TLS", async () => {
    const out = await runRecipe("curl");
    expect(out).toContain('"id":"from-curl"');
    expect(out).toContain('^@^@^@^@?{"output":{"data":"aGVsbG8gZnJvbSBjdXJsDQo=","endOffset":"17"}}');
    expect(out).toContain(`'{"offset":"17","exited":{"exitCode":0}}^B^@^@^@^B{}`);
    expect(out).toContain('"id":"recipes-tls"');
  });

  it("buf curl: services, methods and calls through reflection, also over mutual TLS", async () => {
    const out = await runRecipe("buf-curl", undefined, ROOT);
    // Listed twice: by the cleartext runner, then through mutual TLS.
    expect(out).toMatch(twice("grpc.reflection.v1.ServerReflection\n"));
    expect(out).toContain("terminal.v1.TerminalService/WriteStream\n");
    expect(out).toContain('"id": "from-buf-curl"');
    expect(out).toContain(`"data": "${Buffer.from("hello from buf curl\r\n").toString("base64")}"`);
    expect(out).toMatch(/"exited": \{\s*"exitCode": 0/);
  });

  it("TypeScript: a generated client over h2c and over mutual TLS", async () => {
    const out = await runRecipe("typescript", (dir) => {
      // What the page's npm install step leaves: a module package with the dependencies installed.
      writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
      symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    });
    expect(out).toMatch(twice("hello from typescript\\r\\nexit code 0\\n"));
  });

  it.skipIf(!pythonReady)("Python: Debian's protoc and grpcio, over h2c and over mutual TLS", async () => {
    expect(await runRecipe("python")).toMatch(twice("hello from python\\r\\nexit code 0\\n"));
  });

  it.skipIf(!goReady)("Go: Debian's Go, plugins and libraries, offline, over h2c and over mutual TLS", { timeout: 180_000 }, async () => {
    expect(await runRecipe("go")).toMatch(twice("hello from go\\r\\nexit code 0\\n"));
  });
});
