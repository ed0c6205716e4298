/** Protocol versions this gateway speaks, newest first. */
export const SUPPORTED_VERSIONS = ["0.9.0", "0.8.0", "0.7.0", "0.6.0", "0.5.2", "0.5.1"] as const;

/** One of the supported protocol versions. */
export type ProtocolVersion = (typeof SUPPORTED_VERSIONS)[number];

/** The first offered version (in the client's order of preference) that this gateway speaks. */
export function negotiateVersion(offered: readonly unknown[]): ProtocolVersion | undefined {
  return offered.find((version): version is ProtocolVersion => (SUPPORTED_VERSIONS as readonly unknown[]).includes(version));
}

/** What differs on the wire between versions, as far as terminals are concerned. */
export interface VersionFeatures {
  /** `TerminalState.isPty` (0.7 and later). */
  isPty: boolean;
  /** `lifecycle` on terminal state and rows, required (0.9). */
  lifecycle: boolean;
  /** Session claims carry `chat`, required (0.9). */
  claimChat: boolean;
  /** `serverInfo` and `terminalCommandPrefix` in `initialize` (0.5.2 and later). */
  serverInfo: boolean;
}

/** The wire features of a negotiated version. */
export function featuresOf(version: ProtocolVersion): VersionFeatures {
  const [, minor, patch] = version.split(".").map(Number) as [number, number, number];
  return {
    isPty: minor >= 7,
    lifecycle: minor >= 9,
    claimChat: minor >= 9,
    serverInfo: minor > 5 || patch >= 2,
  };
}
