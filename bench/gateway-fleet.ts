import { runnerClient, startGateway, type Service } from "./support.js";

/** The connection token every gateway of a fleet shares, as replicas behind one Service do. */
const FLEET_GATEWAY_TOKEN = "bench-gateway-token";

/** Several gateways started with the same flags in front of the same runners. */
export interface GatewayFleet {
  gateways: Service[];
  /** Each gateway's WebSocket URL (with the token), in the order of `gateways`. */
  urls(): string[];
  /** Names for reports: "gateway-1", "gateway-2", … */
  names(): string[];
  /** Kills gateway `index` with SIGKILL and resolves once it is gone. */
  kill(index: number): Promise<void>;
  /** Starts gateway `index` again on the port it had, so the clients' URL lists stay valid. */
  restart(index: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `count` gateways, one after another, each with `--runner` for every runner and `args`. */
export async function startFleet(runners: string[], count: number, args: string[]): Promise<GatewayFleet> {
  const gateways: Service[] = [];
  const start = (port = 0) => startGateway(runners, ["--token", FLEET_GATEWAY_TOKEN, ...args], port);
  for (let i = 0; i < count; i++) gateways.push(await start());
  return {
    gateways,
    urls: () => gateways.map((gateway) => gateway.address),
    names: () => gateways.map((_, i) => `gateway-${i + 1}`),
    kill: (index) =>
      new Promise((done) => {
        const child = gateways[index]!.child;
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once("exit", () => done());
        child.kill("SIGKILL");
      }),
    restart: async (index) => {
      gateways[index] = await start(Number(new URL(gateways[index]!.address).port));
    },
    stop: async () => {
      await Promise.all(gateways.map((gateway) => gateway.stop()));
    },
  };
}

/** Closes every terminal left on `runners`, so the next gateways adopt nothing from an earlier setup. */
export async function closeAllTerminals(runners: string[]): Promise<number> {
  let closed = 0;
  for (const url of runners) {
    const runner = runnerClient(url);
    for (const terminal of (await runner.list({})).terminals) {
      await runner.close({ id: terminal.id, graceMs: 200 }).catch(() => undefined);
      closed++;
    }
  }
  return closed;
}

/** Output bytes the terminals of `runners` have written so far (their end offsets). */
export async function producedBytes(runners: string[]): Promise<number> {
  let sum = 0;
  for (const url of runners) for (const terminal of (await runnerClient(url).list({})).terminals) sum += Number(terminal.endOffset);
  return sum;
}
