import { isIP } from "node:net";

/** Which names and pages may reach the gateway: `--allowed-hosts`, `--allowed-origins` and the address it binds. */
export interface HostGuardOptions {
  /** Host names (`a.example`), domains with their subdomains (`.example.com`), or `*` for any. */
  allowedHosts: readonly string[];
  /** Origins (`https://x.example`), or `*` for any. */
  allowedOrigins: readonly string[];
  /** The address the gateway binds: a name there is allowed too. */
  boundHost: string;
}

/** A request's headers, as Node gives them. */
type Headers = { host?: string; origin?: string | string[] };

/** Names of this machine a browser can only mean locally (a DNS answer cannot rebind them). */
const LOOPBACK_NAMES = ["localhost"];

/**
 * The Host and Origin rule every request passes before anything else is looked at, the defence
 * against DNS rebinding and against pages of other sites. Host must name this gateway: `localhost`,
 * any IP address (a page is only ever served under an address by the server at that address, so a
 * browser naming one is not being rebound), the bound host, or a name allowed by `--allowed-hosts`;
 * the port is not compared, so port forwarding works. Origin, when present (browsers send it;
 * ahp-term and other programs do not), must be the page's own host and port as the Host header
 * names them (the console connects back to where it was served from) or an origin allowed by
 * `--allowed-origins`. Returns the refusal, or undefined when the request may go on.
 */
export function createHostGuard({ allowedHosts, allowedOrigins, boundHost }: HostGuardOptions): (headers: Headers) => string | undefined {
  const anyHost = allowedHosts.includes("*");
  const names = new Set([...LOOPBACK_NAMES, ...allowedHosts.filter((host) => !host.startsWith("."))]);
  if (!isIP(bareHost(boundHost))) names.add(boundHost.toLowerCase());
  const domains = allowedHosts.filter((host) => host.startsWith("."));
  const anyOrigin = allowedOrigins.includes("*");
  const origins = new Set(allowedOrigins);
  const hostAllowed = (hostname: string): boolean => anyHost || isIP(bareHost(hostname)) !== 0 || names.has(hostname) || domains.some((domain) => hostname.endsWith(domain) || hostname === domain.slice(1));
  return (headers) => {
    const host = authorityOf(headers.host);
    if (!host) return `the Host header ${JSON.stringify(headers.host ?? "")} is not a host name`;
    if (!hostAllowed(host.hostname)) return `the host ${JSON.stringify(host.hostname)} is not one this gateway serves (add it to --allowed-hosts)`;
    if (headers.origin === undefined || anyOrigin) return undefined;
    const origin = typeof headers.origin === "string" ? normalizedOrigin(headers.origin) : undefined;
    if (origin && (origins.has(origin) || new URL(origin).host === host.host)) return undefined;
    return `pages of the origin ${JSON.stringify(String(headers.origin))} may not connect (add it to --allowed-origins)`;
  };
}

/** A `--allowed-hosts` entry lowercased, or undefined when it is not a host name, an address, `.domain` or `*` (a port or scheme is refused). */
export function normalizedHostPattern(entry: string): string | undefined {
  const pattern = entry.trim().toLowerCase();
  if (pattern === "*") return pattern;
  const name = pattern.startsWith(".") ? pattern.slice(1) : pattern;
  const parsed = authorityOf(name);
  return parsed && parsed.host === name && parsed.hostname === name ? pattern : undefined;
}

/** A `--allowed-origins` entry as browsers send it (`scheme://host[:port]`, default port dropped), or undefined when it is not one; `*` stays. */
export function normalizedOrigin(entry: string): string | undefined {
  if (entry.trim() === "*") return "*";
  try {
    const url = new URL(entry.trim());
    if (url.origin === "null" || url.href !== `${url.origin}/` || entry.trim().endsWith("/")) return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/** The host name and host:port a Host header names, lowercased (IPv6 in brackets), or undefined when it is not an authority alone. */
function authorityOf(header: string | undefined): { hostname: string; host: string } | undefined {
  if (!header || /[\s/\\?#@]/.test(header)) return undefined;
  try {
    const url = new URL(`http://${header}`);
    return { hostname: url.hostname, host: url.host };
  } catch {
    return undefined;
  }
}

/** An IPv6 address without its URL brackets. */
function bareHost(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}
