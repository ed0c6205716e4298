import { pino } from "pino";

/** A structured logger (pino). */
export type Logger = pino.Logger;

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** A logger that writes JSON lines to stderr, so stdout stays free for the one line that announces the address. */
export function createLogger(level: string, name: string): Logger {
  return pino({ name, level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
}
