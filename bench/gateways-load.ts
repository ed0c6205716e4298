import { closeAllTerminals, producedBytes, startFleet } from "./gateway-fleet.js";
import { subscribeWithin } from "./subscribe-within.js";
import { BenchClient, cpuSecondsOf, round, sleep, type Service } from "./support.js";

/** The load of one setup: how many terminals, how many of them watched, and the measured window. */
export interface LoadSettings {
  terminals: number;
  watched: number;
  warmupSeconds: number;
  seconds: number;
}

/** What one setup measured over its window. */
export interface LoadRound {
  gateways: number;
  deliveredMB: number;
  cpuMs: Record<string, number>;
  report: Record<string, unknown>;
}

// bash builtins only (no process per line): 4,000 characters, then a 0.1 s read timeout on the idle input (as bench/scale.ts).
const PRODUCER = "while :; do printf '%04000d\\n' 0; read -rt 0.1 _; done\r";
/** How long a watcher keeps asking for a terminal another gateway created: the bound on propagation. */
const SUBSCRIBE_WITHIN_MS = 5_000;
/** A watched terminal that delivered less than this in the window delivered nothing to speak of. */
const SILENT_BYTES = 1_000;

/**
 * One setup: `gatewayCount` gateways in front of `runners`; `terminals` bash loops of about 40 KB/s
 * each created round-robin through the gateways, `watched` of them subscribed by one client each,
 * spread over the gateways so that most watch a terminal another gateway created (as a load balancer
 * would send them). CPU of every service process and the bytes the watchers received, over the window.
 */
export async function loadRound(runners: Service[], gatewayCount: number, settings: LoadSettings, tag: string): Promise<LoadRound> {
  const runnerUrls = runners.map((runner) => runner.address);
  // The gateway's per-connection and per-user terminal limits are for people; this bench is one user with every terminal.
  const limits = ["--max-terminals-per-connection", String(settings.terminals), "--max-terminals-per-user", String(settings.terminals)];
  const fleet = await startFleet(runnerUrls, gatewayCount, limits);
  const clients: BenchClient[] = [];
  try {
    const urls = fleet.urls();
    const creators = await Promise.all(urls.map((url) => BenchClient.connect(url)));
    clients.push(...creators);
    const uris = Array.from({ length: settings.terminals }, (_, i) => `ahp-terminal:/gateways-${tag}-${i}`);
    const creatorOf = (i: number) => i % gatewayCount;
    const spawnStarted = performance.now();
    for (const [i, uri] of uris.entries()) await creators[creatorOf(i)]!.call("createTerminal", { channel: uri });
    const spawnSeconds = (performance.now() - spawnStarted) / 1000;

    const step = Math.max(1, Math.floor(settings.terminals / settings.watched));
    const watched = Array.from({ length: Math.min(settings.watched, settings.terminals) }, (_, k) => k * step);
    const received = new Map<number, number>();
    const watchers = await Promise.all(
      watched.map(async (terminal, k) => {
        // Offsetting by k puts a third of the watchers on the creating gateway, as a load balancer choosing at random would.
        const gateway = (creatorOf(terminal) + k) % gatewayCount;
        const client = await BenchClient.connect(urls[gateway]!);
        clients.push(client);
        client.onData(uris[terminal]!, (text) => received.set(terminal, (received.get(terminal) ?? 0) + Buffer.byteLength(text)));
        return { gateway, onCreator: gateway === creatorOf(terminal), ...(await subscribeWithin(client, uris[terminal]!, SUBSCRIBE_WITHIN_MS)) };
      }),
    );
    for (const [i, uri] of uris.entries()) creators[creatorOf(i)]!.input(uri, PRODUCER);
    await sleep(settings.warmupSeconds * 1000);

    const names = [...runners.map((_, i) => `runner-${i + 1}`), ...fleet.names()];
    const pids = [...runners, ...fleet.gateways].map((service) => service.child.pid!);
    const delivered = () => [...received.values()].reduce((a, b) => a + b, 0);
    const cpuBefore = pids.map(cpuSecondsOf);
    const receivedBefore = new Map(received);
    const deliveredBefore = delivered();
    const producedBefore = await producedBytes(runnerUrls);
    const started = performance.now();
    await sleep(settings.seconds * 1000);
    const cpuMs = Object.fromEntries(names.map((name, i) => [name, (cpuSecondsOf(pids[i]!) - cpuBefore[i]!) * 1000]));
    const deliveredMB = (delivered() - deliveredBefore) / 1e6;
    const elapsed = (performance.now() - started) / 1000;
    const producedMB = ((await producedBytes(runnerUrls)) - producedBefore) / 1e6;
    const silent = watched.filter((terminal) => (received.get(terminal) ?? 0) - (receivedBefore.get(terminal) ?? 0) < SILENT_BYTES).length;

    let disposeRefused = 0;
    for (const [i, uri] of uris.entries()) await creators[creatorOf(i)]!.call("disposeTerminal", { channel: uri }).catch(() => disposeRefused++);
    const refusals = watchers.filter((watcher) => watcher.refusal !== undefined);
    return {
      gateways: gatewayCount,
      deliveredMB,
      cpuMs,
      report: {
        gateways: gatewayCount,
        spawnSeconds: round(spawnSeconds),
        watchers: {
          count: watchers.length,
          onCreatingGateway: watchers.filter((watcher) => watcher.onCreator).length,
          subscribed: watchers.length - refusals.length,
          refused: refusals.length,
          ...(refusals.length ? { firstRefusal: refusals[0]!.refusal } : {}),
          subscribeMsMax: round(Math.max(...watchers.filter((watcher) => !watcher.refusal).map((watcher) => watcher.ms), 0)),
        },
        windowSeconds: round(elapsed),
        producedMBPerSecond: round(producedMB / elapsed),
        deliveredMB: round(deliveredMB, 3),
        watchedSilent: silent,
        cpuMs: Object.fromEntries(Object.entries(cpuMs).map(([name, ms]) => [name, Math.round(ms)])),
        cpuMsPerDeliveredMB: perDeliveredMB(cpuMs, deliveredMB),
        disposeRefused,
      },
    };
  } finally {
    for (const client of clients) client.close();
    await fleet.stop();
    await closeAllTerminals(runnerUrls);
  }
}

/** CPU ms per delivered MB of each process, of the runners together, the gateways together, and all; null when nothing was delivered. */
export function perDeliveredMB(cpuMs: Record<string, number>, deliveredMB: number): Record<string, number | null> {
  const sum = (prefix: string) => Object.entries(cpuMs).reduce((total, [name, ms]) => (name.startsWith(prefix) ? total + ms : total), 0);
  const per = (ms: number) => (deliveredMB > 0 ? round(ms / deliveredMB) : null);
  const processes = Object.fromEntries(Object.entries(cpuMs).map(([name, ms]) => [name, per(ms)]));
  return { ...processes, runners: per(sum("runner-")), gateways: per(sum("gateway-")), total: per(sum("")) };
}
