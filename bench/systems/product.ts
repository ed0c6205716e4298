import { contentText } from "../../ahp/content-text.js";
import { BenchClient, startSystem } from "../support.js";
import { OutputRelay } from "./output-relay.js";
import { COLS, ROWS, execLine, type TerminalSystem } from "./terminal-system.js";

/** WebSocket connections the product's terminals are spread over, as scale.ts spreads them: a few connections, each carrying many terminals. */
const CLIENTS = 4;

/** This project as users run it: a compiled runner and gateway, terminals created and read over AHP by a few WebSocket clients in the bench's process. */
export interface ProductSystem extends TerminalSystem {
  runnerAddress: string;
}

/** Starts runner and gateway (their terminals run bash with the integration script) and the clients. */
export async function product(options: { runnerArgs?: string[]; gatewayArgs?: string[] } = {}): Promise<ProductSystem> {
  const system = await startSystem({ shell: "/bin/bash", ...options });
  const clients: BenchClient[] = [];
  const relays = new Map<string, OutputRelay>();
  try {
    for (let i = 0; i < CLIENTS; i++) clients.push(await BenchClient.connect(system.gateway.address));
  } catch (error) {
    await system.stop();
    throw error;
  }
  for (const client of clients) {
    client.onAction = (envelope) => {
      if (envelope.action.type === "terminal/data") relays.get(envelope.channel)?.push(envelope.action.data);
    };
  }
  let opened = 0;
  return {
    runnerAddress: system.runner.address,
    processes: () => ({ runner: [system.runner.child.pid!], gateway: [system.gateway.child.pid!] }),
    open: async (program) => {
      const client = clients[opened % CLIENTS]!;
      const channel = `ahp-terminal:/bench-${opened++}`;
      const relay = new OutputRelay();
      relays.set(channel, relay);
      await client.call("createTerminal", { channel, cols: COLS, rows: ROWS });
      // Subscribing in the same breath as creating: the first prompt byte arrives live, or is already in the snapshot.
      const { snapshot } = await client.call("subscribe", { channel });
      if (contentText(snapshot.state).length > 0) relay.arrivedUnseen();
      if (program !== "bash") client.input(channel, execLine(program));
      return {
        send: (text) => client.input(channel, text),
        output: relay.output,
        firstOutput: relay.firstOutput,
        // Disposed, not only left: a `yes` left running would flood the next measurement.
        close: async () => {
          relays.delete(channel);
          await client.call("disposeTerminal", { channel });
        },
      };
    },
    stop: async () => {
      for (const client of clients) client.close();
      await system.stop();
    },
  };
}
