import { readdirSync, readFileSync } from "node:fs";

/**
 * Descriptors kept back from client sockets for everything else the gateway opens: sessions to its
 * runners, the console's files, DNS lookups, the metrics port, its log.
 */
export const DESCRIPTOR_RESERVE = 64;

/**
 * How many more sockets this process can hold before `accept` fails for lack of descriptors: the
 * open-file limit (the soft one, as Node raised it at start) less the descriptors open now and
 * DESCRIPTOR_RESERVE; undefined where /proc does not tell (not Linux). Past it, libuv takes each
 * new connection and closes it at once without a word, so the gateway must refuse before that.
 */
export function socketsLeftByDescriptors(proc = "/proc/self"): number | undefined {
  try {
    const limit = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(`${proc}/limits`, "utf8"))?.[1];
    if (limit === undefined || limit === "unlimited") return undefined;
    return Math.max(0, Number(limit) - readdirSync(`${proc}/fd`).length - DESCRIPTOR_RESERVE);
  } catch {
    return undefined;
  }
}
