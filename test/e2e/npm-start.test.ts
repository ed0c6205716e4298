import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../support/ahp-test-client.js";
import { ROOT } from "./service-process.js";

describe("npm start", () => {
  it("runs runner and gateway as two processes, prints the gateway URL with its token, and stops both on SIGTERM", async () => {
    const child = spawn("npm", ["start", "--silent", "--", "--port", "0", "--runner-port", "0"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    const stderr: string[] = [];
    createInterface({ input: child.stderr }).on("line", (line) => stderr.push(line));
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`npm start exited with ${code}: ${stderr.join("\n")}`)));
    });
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/\?tkn=[\w-]+$/);
    const client = await AhpTestClient.initialized(url, { subscribe: ["ahp-root://"] });
    await client.call("createTerminal", { channel: "ahp-terminal:/npm-start" });
    await client.call("subscribe", { channel: "ahp-terminal:/npm-start" });
    client.dispatch("ahp-terminal:/npm-start", { type: "terminal/input", data: "echo from-start-$((5+5))\r" });
    await client.waitForOutput("ahp-terminal:/npm-start", /from-start-10/);
    const names = new Set(stderr.map((line) => (JSON.parse(line) as { name?: string }).name));
    expect(names).toEqual(new Set(["runner", "gateway"]));
    const exited = new Promise<string>((resolve) => child.once("exit", (code, signal) => resolve(signal ?? String(code))));
    child.kill("SIGTERM");
    // npm itself reports the forwarded signal; what matters is that both services shut down cleanly.
    expect(["0", "SIGTERM"]).toContain(await exited);
    expect(await client.closed()).toBe(1001);
    for (let i = 0; i < 100 && stderr.filter((line) => line.includes('"msg":"stopped"')).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stderr.filter((line) => line.includes('"msg":"stopped"'))).toHaveLength(2);
  });
});
