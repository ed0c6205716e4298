/**
 * The parts of the Agent Host Protocol (0.5.1–0.9.0) this gateway speaks: terminals, the root
 * channel and the connection envelopes. Internal state is the superset of every version; the
 * shaping module turns it into what a given protocol version expects on the wire.
 */

/** A channel or resource URI. */
export type Uri = string;

/** A terminal held by a connected client. */
export interface ClientClaim {
  kind: "client";
  clientId: string;
}

/** A terminal held by a session (and, from 0.9, a chat in it), optionally scoped to a turn and tool call. */
export interface SessionClaim {
  kind: "session";
  session: Uri;
  chat?: Uri;
  turnId?: string;
  toolCallId?: string;
}

/** Who holds a terminal. */
export type TerminalClaim = ClientClaim | SessionClaim;

/** Raw output outside any detected command. */
export interface UnclassifiedPart {
  type: "unclassified";
  value: string;
}

/** A command found by shell integration, with its output. */
export interface CommandPart {
  type: "command";
  commandId: string;
  commandLine: string;
  output: string;
  timestamp: number;
  isComplete: boolean;
  exitCode?: number;
  durationMs?: number;
}

/** One piece of a terminal's content. */
export type TerminalContentPart = UnclassifiedPart | CommandPart;

/** Running or exited (0.9's `lifecycle`). */
export type TerminalLifecycle = { status: "running" } | { status: "exited"; exitCode?: number };

/** A terminal's state: every version's fields (`exitCode` up to 0.8, `lifecycle` from 0.9, `isPty` from 0.7). */
export interface TerminalState {
  title: string;
  cwd?: Uri;
  cols?: number;
  rows?: number;
  content: TerminalContentPart[];
  claim: TerminalClaim;
  exitCode?: number;
  lifecycle?: TerminalLifecycle;
  isPty?: boolean;
  supportsCommandDetection?: boolean;
}

/** A terminal's row on the root channel. */
export interface TerminalInfo {
  resource: Uri;
  title: string;
  claim: TerminalClaim;
  exitCode?: number;
  lifecycle?: TerminalLifecycle;
}

/** A host configuration schema and its values. */
export interface RootConfigState {
  schema: { type: "object"; properties: Record<string, Record<string, unknown>>; required?: string[] };
  values: Record<string, unknown>;
}

/** The root channel's state. */
export interface RootState {
  agents: unknown[];
  activeSessions?: number;
  terminals?: TerminalInfo[];
  config?: RootConfigState;
  _meta?: Record<string, unknown>;
}

/** The terminal channel's actions. */
export type TerminalAction =
  | { type: "terminal/data"; data: string }
  | { type: "terminal/input"; data: string }
  | { type: "terminal/resized"; cols: number; rows: number }
  | { type: "terminal/claimed"; claim: TerminalClaim }
  | { type: "terminal/titleChanged"; title: string }
  | { type: "terminal/cwdChanged"; cwd: Uri }
  | { type: "terminal/exited"; exitCode?: number; signal?: string }
  | { type: "terminal/cleared" }
  | { type: "terminal/commandDetectionAvailable" }
  | { type: "terminal/commandExecuted"; commandId: string; commandLine: string; timestamp: number }
  | { type: "terminal/commandFinished"; commandId: string; exitCode?: number; durationMs?: number };

/** The root channel's actions. */
export type RootAction =
  | { type: "root/agentsChanged"; agents: unknown[] }
  | { type: "root/activeSessionsChanged"; activeSessions: number }
  | { type: "root/terminalsChanged"; terminals: TerminalInfo[] }
  | { type: "root/configChanged"; config: Record<string, unknown>; replace?: boolean };

/** Any action this gateway knows. */
export type StateAction = TerminalAction | RootAction;

/** Identifies the client action an envelope echoes. */
export interface ActionOrigin {
  clientId: string;
  clientSeq: number;
}

/** An action as it travels: its channel, the global sequence number, and who dispatched it. */
export interface ActionEnvelope {
  channel: Uri;
  action: StateAction;
  serverSeq: number;
  origin?: ActionOrigin;
  rejectionReason?: string;
  /** What this gateway adds for clients that ask (an output envelope's runner offset, see docs/ahp.md); others ignore it. */
  _meta?: Record<string, unknown>;
}

/** A channel's state at a sequence number. */
export interface Snapshot {
  resource: Uri;
  state: RootState | TerminalState;
  fromSeq: number;
  /** What this gateway adds for clients that ask (a terminal's rendered screen, see docs/ahp.md); others ignore it. */
  _meta?: Record<string, unknown>;
}

/** The root channel's URI. */
export const ROOT_URI = "ahp-root://";
