import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "../../../gateway/config.js";
import { createHostGuard } from "../../../gateway/wire/host-guard.js";
import { compose, servicesBuiltFrom, withSecretFiles } from "./compose-file.js";
import { flag, ROOT } from "./manifests.js";
import { haproxySection, haproxySections } from "./haproxy-config.js";
import { HAPROXY, HAPROXY_SKIP_REASON } from "../../support/haproxy-balancer.js";

const CONFIG = "deploy/haproxy.cfg";
/** Where the official haproxy image reads its configuration. */
const IMAGE_CONFIG = "/usr/local/etc/haproxy/haproxy.cfg";

const config = () => haproxySections(readFileSync(join(ROOT, CONFIG), "utf8"));
const balancer = () => compose().services.balancer;
const gateways = () => servicesBuiltFrom("gateway.Dockerfile");
/** The port the balancer's frontend binds. */
const boundPort = () => Number(/^bind \S*:(\d+)$/.exec(haproxySection(config(), "frontend").lines.find((line) => line.startsWith("bind "))!)![1]);

describe("the compose file's gateways", () => {
  it("are two, run alike: the same command, token files and limits over the same runners", () => {
    const { services } = compose();
    expect(gateways()).toEqual(["gateway-1", "gateway-2"]);
    const [first, second] = gateways().map((name) => services[name]);
    expect(second).toEqual(first);
    const tokens = gateways().map((name) => parseGatewayConfig(withSecretFiles(services[name].command), {}, "/"));
    expect(tokens[1]!.token).toBe(tokens[0]!.token);
  });

  it("sit behind haproxy, which alone publishes a port, reached on the project's network by a name every gateway allows", () => {
    const { services } = compose();
    const published = Object.keys(services).filter((name) => services[name].ports);
    expect(published).toEqual(["balancer"]);
    expect(balancer().ports).toEqual([`127.0.0.1:${boundPort()}:${boundPort()}`]);
    const alias: string = balancer().networks.default.aliases[0];
    for (const name of gateways()) {
      const gateway = parseGatewayConfig(withSecretFiles(services[name].command), {}, "/");
      const guard = createHostGuard({ allowedHosts: gateway.allowedHosts, allowedOrigins: [], boundHost: gateway.host });
      expect(guard({ host: `${alias}:${boundPort()}` }), name).toBeUndefined();
      expect(guard({ host: `localhost:${boundPort()}` }), name).toBeUndefined();
      // Every client arrives from haproxy's address: the per-address limit is the total.
      expect(gateway.socketLimits.maxConnectionsPerAddress, name).toBe(gateway.socketLimits.maxConnections);
    }
  });

  it("are balanced by the official haproxy image at a pinned version, reading deploy/haproxy.cfg", () => {
    expect(balancer().image).toMatch(/^haproxy:\d+\.\d+[\w.-]*$/);
    expect(balancer().volumes).toEqual([`./haproxy.cfg:${IMAGE_CONFIG}:ro`]);
  });
});

describe("deploy/haproxy.cfg", () => {
  it("passes connections in TCP mode to every gateway of the compose file, on each one's port, nothing sticky", () => {
    const sections = config();
    expect(haproxySection(sections, "defaults").lines).toContain("mode tcp");
    const backend = haproxySection(sections, "backend");
    const servers = backend.lines.filter((line) => line.startsWith("server ")).map((line) => line.split(" ").slice(1, 3));
    const { services } = compose();
    expect(servers).toEqual(gateways().map((name) => [name, `${name}:${flag(services[name].command, "--port")}`]));
    expect(backend.lines.some((line) => /^balance (leastconn|roundrobin)$/.test(line))).toBe(true);
    for (const line of sections.flatMap((section) => section.lines)) expect(line).not.toMatch(/^(stick|cookie|hash-type)\b|^balance source/);
    // A connection refused by a gateway that died goes to another before the checks have marked it down.
    expect(haproxySection(sections, "defaults").lines).toEqual(expect.arrayContaining(["option redispatch 1", expect.stringMatching(/^retries [1-9]/)]));
  });

  it("checks each gateway's readiness over HTTP, every second, with a Host the gateway allows", () => {
    const backend = haproxySection(config(), "backend");
    expect(backend.lines).toContain("option httpchk");
    expect(backend.lines).toContain("http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost");
    expect(backend.lines).toContain("http-check expect status 200");
    expect(backend.lines.find((line) => line.startsWith("default-server "))).toMatch(/ check inter 1s fall 2 rise 2 /);
    expect(readFileSync(join(ROOT, "gateway/server.ts"), "utf8")).toContain('"/readyz"');
  });

  it.skipIf(HAPROXY_SKIP_REASON)(`is a configuration haproxy accepts${HAPROXY_SKIP_REASON ? ` (${HAPROXY_SKIP_REASON})` : ""}`, () => {
    const checked = spawnSync(HAPROXY, ["-c", "-f", join(ROOT, CONFIG)], { encoding: "utf8" });
    expect({ status: checked.status, said: `${checked.stdout}${checked.stderr}` }).toEqual({ status: 0, said: expect.stringContaining("Configuration file is valid") });
  });
});
