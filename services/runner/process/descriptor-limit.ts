import { readdirSync, readFileSync } from "node:fs";
import type { Logger } from "../../../lib/logger.js";
import { RateLimitedLog } from "../../../lib/rate-limited-log.js";
import { RunnerError } from "../runner-error.js";

/**
 * Descriptors a spawn must find free. Pipes take the most: three pipes plus libuv's exec-error pipe,
 * 8 open at once; the rest leaves room for a connection accepted or a file read meanwhile.
 */
export const SPAWN_DESCRIPTOR_HEADROOM = 16;

/** Descriptors a new connection must leave free: a few spawns' worth, so connections alone cannot keep terminals from starting. */
export const CONNECTION_DESCRIPTOR_RESERVE = 2 * SPAWN_DESCRIPTOR_HEADROOM;
/** How long a count of open descriptors is trusted while plenty are free: reading /proc for every connection would cost more than the connection. */
const USAGE_CACHE_MS = 100;

/** Descriptors open in this process, and how many it may open (the soft RLIMIT_NOFILE). */
export interface DescriptorUsage {
  open: number;
  limit: number;
}

/** Where the counts come from (Linux's /proc); tests hand in their own. */
export interface DescriptorSource {
  /** Names in /proc/self/fd (the directory's own descriptor among them while it is read). */
  listOpen(): string[];
  /** /proc/self/limits. */
  readLimits(): string;
}

const PROC: DescriptorSource = {
  listOpen: () => readdirSync("/proc/self/fd"),
  readLimits: () => readFileSync("/proc/self/limits", "utf8"),
};

/**
 * Keeps spawns from failing obscurely when the runner is out of file descriptors: a spawn is refused
 * with RESOURCE_EXHAUSTED, saying how many are open and the limit, when fewer than
 * SPAWN_DESCRIPTOR_HEADROOM are free, and a spawn that fails with EMFILE or ENFILE (or with
 * node-pty's bare "forkpty(3) failed.", which carries no errno) while few are free is answered the
 * same way. A warning is logged (at most once a minute). Terminals already running are not touched.
 */
export class DescriptorLimit {
  private limit: number | undefined;
  private readonly warn: (fields?: Record<string, unknown>) => void;
  private counted: { usage: DescriptorUsage; at: number } | undefined;

  constructor(
    log: Logger,
    private readonly source: DescriptorSource = PROC,
  ) {
    this.warn = new RateLimitedLog(log).warning("the runner is out of file descriptors: spawns are refused until terminals or connections close (or raise its open-file limit)");
    this.limit = this.readLimit();
  }

  /** The counts now; undefined where /proc cannot tell (not Linux). */
  usage(): DescriptorUsage | undefined {
    const limit = this.readLimit() ?? this.limit;
    if (limit === undefined) return undefined;
    this.limit = limit;
    try {
      return { open: this.source.listOpen().length - 1, limit };
    } catch (err) {
      if (isOutOfDescriptors(err)) return { open: limit, limit };
      return undefined;
    }
  }

  /** Runs `spawn` if descriptors are left for it; RESOURCE_EXHAUSTED when they ran out before or during it. */
  spawn<T>(spawn: () => T): T {
    this.refuseIfShort(this.usage());
    try {
      return spawn();
    } catch (err) {
      const usage = this.usage();
      if (isOutOfDescriptors(err)) throw this.refusal(usage);
      this.refuseIfShort(usage);
      throw err;
    }
  }

  /**
   * Whether a connection just accepted (its descriptor counted) leaves CONNECTION_DESCRIPTOR_RESERVE
   * free. libuv closes connections silently once accept() fails with EMFILE, so the runner stops
   * short of that and can say why; the count is read again only when it is old or getting close.
   */
  roomForConnection(): DescriptorUsage | true {
    const now = performance.now();
    const counted = this.counted;
    if (counted && now - counted.at < USAGE_CACHE_MS && counted.usage.limit - counted.usage.open > 2 * CONNECTION_DESCRIPTOR_RESERVE) {
      counted.usage.open++;
      return true;
    }
    const usage = this.usage();
    if (!usage) return true;
    this.counted = { usage, at: now };
    return usage.limit - usage.open >= CONNECTION_DESCRIPTOR_RESERVE || usage;
  }

  private refuseIfShort(usage: DescriptorUsage | undefined): void {
    if (usage && usage.limit - usage.open < SPAWN_DESCRIPTOR_HEADROOM) throw this.refusal(usage);
  }

  private refusal(usage: DescriptorUsage | undefined): RunnerError {
    this.warn(usage ? { ...usage } : {});
    const counts = usage ? `: ${usage.open} open, limit ${usage.limit}` : "";
    return new RunnerError("resource_exhausted", `the runner is out of file descriptors${counts}; close terminals, or raise the runner's open-file limit`);
  }

  private readLimit(): number | undefined {
    try {
      const soft = /^Max open files\s+(\S+)/m.exec(this.source.readLimits())?.[1];
      return soft === undefined || soft === "unlimited" ? undefined : Number(soft);
    } catch {
      return undefined;
    }
  }
}

function isOutOfDescriptors(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "EMFILE" || code === "ENFILE";
}
