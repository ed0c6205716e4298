import { pino } from "pino";
import type { Logger } from "../../lib/logger.js";

/** A logger whose JSON lines a test reads back, parsed. */
export function capturedLog(level = "info"): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}
