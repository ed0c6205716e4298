/** A negotiated protocol version: exactly the string the client offered (`1.5.0` stays `1.5.0`). */
export type ProtocolVersion = string;

/** `MAJOR.MINOR.PATCH`, three integers without leading zeros, nothing after them. */
const VERSION_PATTERN = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** Released baselines: any offer caret-compatible with one of them is spoken (`>=1.0.0 <2.0.0`, `>=0.9.0 <0.10.0`). */
const CARET_BASELINES = ["1.0.0", "0.9.0"] as const;
/** VS Code's name for a release that shares the baselines' wire contract; it sorts between 0.9.x and 1.0.0. */
const ALIAS_VERSION = "0.10.0";
/** Older versions, spoken for older clients as exact matches only. */
const EXACT_VERSIONS = ["0.8.0", "0.7.0", "0.6.0", "0.5.2", "0.5.1"] as const;

/** What `-32005` lists, newest first: the baselines (each standing for its caret range), the alias, the exact older versions. */
export const SUPPORTED_VERSIONS: readonly string[] = [CARET_BASELINES[0], ALIAS_VERSION, CARET_BASELINES[1], ...EXACT_VERSIONS];

/** An offered version that is not a well-formed `MAJOR.MINOR.PATCH` string. */
export class MalformedVersionError extends Error {
  constructor(readonly offered: unknown) {
    super(`Malformed protocol version ${JSON.stringify(offered)}: expected MAJOR.MINOR.PATCH without leading zeros or suffixes`);
  }
}

/** The three numbers of a well-formed version, or undefined. */
export function parseProtocolVersion(value: unknown): readonly [number, number, number] | undefined {
  if (typeof value !== "string") return undefined;
  const match = VERSION_PATTERN.exec(value);
  if (!match) return undefined;
  const parts = [Number(match[1]), Number(match[2]), Number(match[3])] as const;
  return parts.every(Number.isSafeInteger) ? parts : undefined;
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b` (both well-formed). */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parseProtocolVersion(a), parseProtocolVersion(b)];
  if (!x || !y) throw new MalformedVersionError(x ? b : a);
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/** True when this gateway speaks `version`: an exact older version, the alias, or a caret match of a baseline. */
export function isSpoken(version: string): boolean {
  if ((EXACT_VERSIONS as readonly string[]).includes(version) || version === ALIAS_VERSION) return true;
  const [major, minor] = parseProtocolVersion(version) ?? [-1, -1];
  return CARET_BASELINES.some((baseline) => {
    const [baseMajor, baseMinor] = parseProtocolVersion(baseline)!;
    return major === baseMajor && (major > 0 || minor === baseMinor) && compareVersions(version, baseline) >= 0;
  });
}

/**
 * The highest offered version this gateway speaks, whatever the order of the offer, returned as
 * offered; undefined when none is. A malformed entry is an error even beside a valid one.
 */
export function negotiateVersion(offered: readonly unknown[]): ProtocolVersion | undefined {
  for (const version of offered) if (!parseProtocolVersion(version)) throw new MalformedVersionError(version);
  let best: string | undefined;
  for (const version of offered as readonly string[]) {
    if (isSpoken(version) && (best === undefined || compareVersions(version, best) > 0)) best = version;
  }
  return best;
}

/** What differs on the wire between versions, for a terminal host. */
export interface VersionFeatures {
  /** `serverInfo` and `terminalCommandPrefix` in `initialize` (0.5.2). */
  serverInfo: boolean;
  /** `TerminalState.isPty` (0.7). */
  isPty: boolean;
  /** `auth/required.resource` is protected resource metadata, not a string (0.8). */
  authRequiredMetadata: boolean;
  /** `lifecycle` on terminal state and rows, required (0.9). */
  lifecycle: boolean;
  /** Session claims carry `chat`, required (0.9). */
  claimChat: boolean;
  /** `authenticate.expiresIn`: the sign-in lapses after it (1.0). */
  tokenLifetime: boolean;
  /** Subscribing to a released terminal returns its exited state (1.0). */
  historicalTerminals: boolean;
  /** `subscribe.flowControl`: windowed delivery in `channel/frame` fragments (1.1). */
  windowedDelivery: boolean;
}

/** The version each feature appeared in: the one table every per-version difference is read from. */
const INTRODUCED_IN: Readonly<Record<keyof VersionFeatures, string>> = {
  serverInfo: "0.5.2",
  isPty: "0.7.0",
  authRequiredMetadata: "0.8.0",
  lifecycle: "0.9.0",
  claimChat: "0.9.0",
  tokenLifetime: "1.0.0",
  historicalTerminals: "1.0.0",
  windowedDelivery: "1.1.0",
};

/** The wire features of a negotiated version: everything introduced up to it, nothing newer. */
export function featuresOf(version: ProtocolVersion): VersionFeatures {
  const features = {} as VersionFeatures;
  for (const [feature, since] of Object.entries(INTRODUCED_IN) as Array<[keyof VersionFeatures, string]>) {
    features[feature] = compareVersions(version, since) >= 0;
  }
  return features;
}
