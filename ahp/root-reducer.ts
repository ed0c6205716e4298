import type { RootState, TerminalInfo } from "./types.js";

/** The root channel's reducer, as clients run it (pinned by the official fixtures). Unknown types change nothing. */
export function rootReducer(state: RootState, action: { type: string; [key: string]: unknown }): RootState {
  switch (action.type) {
    case "root/agentsChanged":
      return { ...state, agents: action.agents as unknown[] };
    case "root/activeSessionsChanged":
      return { ...state, activeSessions: action.activeSessions as number };
    case "root/terminalsChanged":
      return { ...state, terminals: action.terminals as TerminalInfo[] };
    case "root/configChanged": {
      if (!state.config) return state;
      const config = action.config as Record<string, unknown>;
      const values = action.replace ? { ...config } : { ...state.config.values, ...config };
      return { ...state, config: { ...state.config, values } };
    }
    default:
      return state;
  }
}
