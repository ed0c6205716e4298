import { join } from "node:path";
import WebSocket from "ws";
import { programPath } from "../floor/bare-wire.js";
import { ROOT, shellEnv, startNode } from "../support.js";
import { PROGRAMS } from "./node-pty.js";
import { OutputRelay } from "./output-relay.js";
import type { TerminalSystem } from "./terminal-system.js";

/**
 * The least each shape of the product can be (bench/floor/): what a target can be told apart from,
 * as systems. Each terminal is one WebSocket whose path names its program; output is relayed unparsed.
 */

/** Terminals of a bare shape: one WebSocket each, the program named in its path. */
function bareTerminals(url: string): TerminalSystem["open"] {
  return async (program) => {
    const socket = new WebSocket(`${url}${programPath(PROGRAMS[program])}`, { perMessageDeflate: false });
    const relay = new OutputRelay();
    socket.on("message", (data: Buffer) => relay.push(data.toString("utf8")));
    await new Promise((done, fail) => socket.once("open", done).once("error", fail));
    return {
      send: (text) => socket.send(text),
      output: relay.output,
      firstOutput: relay.firstOutput,
      // The shape kills the connection's pty when the socket closes.
      close: async () => socket.close(),
    };
  };
}

const script = (name: string) => [...process.execArgv, join(ROOT, "bench", "floor", name)];

/** One process holding a WebSocket server and node-pty, relaying unparsed (bench/floor/ws-pty.ts). */
export async function oneProcessFloor(): Promise<TerminalSystem> {
  const server = await startNode(script("ws-pty.ts"), shellEnv("/bin/bash"));
  return { open: bareTerminals(server.address), processes: () => ({ server: [server.child.pid!] }), stop: () => server.stop() };
}

/** A pty host (started with the bench's shell environment) and a WebSocket relay to it, from bench/floor/'s scripts. */
async function relayAndHost(relayScript: string, hostScript: string): Promise<TerminalSystem> {
  const host = await startNode(script(hostScript), shellEnv("/bin/bash"));
  const relay = await startNode([...script(relayScript), host.address]);
  return {
    open: bareTerminals(relay.address),
    processes: () => ({ relay: [relay.child.pid!], ptyHost: [host.child.pid!] }),
    stop: async () => (await relay.stop(), await host.stop()),
  };
}

/** The product's two-process shape with nothing in it: a WebSocket relay and an h2c pty host over one HTTP/2 stream per terminal. */
export const twoProcessFloor = (): Promise<TerminalSystem> => relayAndHost("ws-relay.ts", "pty-host.ts");

/** The two-process shape with connect in it and nothing else: a WebSocket relay calling a pty host through the generated client (Spawn, Attach, WriteStream). */
export const connectFloor = (): Promise<TerminalSystem> => relayAndHost("connect-relay.ts", "connect-pty-host.ts");
