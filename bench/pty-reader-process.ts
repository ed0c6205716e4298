import { spawnRaw } from "./raw-pty.js";
import { shellEnv } from "./support.js";

/**
 * A process of its own that only reads ptys with node-pty, for runner-read-cost.ts: it starts
 * `argv[2]` bash terminals each running the command `argv[3]`, counts their output and prints the
 * count each time a line comes in on stdin, and exits when stdin ends.
 */
const [count, command] = [Number(process.argv[2]), process.argv[3]!];
let bytes = 0;
const terminals = Array.from({ length: count }, () => spawnRaw("/bin/bash", ["--norc", "-c", command], shellEnv("/bin/bash")));
for (const terminal of terminals) terminal.onData((text) => (bytes += Buffer.byteLength(text)));
process.stdin.on("data", () => process.stdout.write(`${bytes}\n`));
process.stdin.on("end", () => {
  for (const terminal of terminals) terminal.kill();
  process.exit(0);
});
