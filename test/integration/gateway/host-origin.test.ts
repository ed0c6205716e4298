import { describe, expect, it } from "vitest";
import { AhpTestClient } from "../../support/ahp-test-client.js";
import { capturedLog } from "../../support/captured-log.js";
import { rawGet } from "../../support/raw-http.js";
import { useTestGateway, type TestGateway } from "./harness.js";

const { log, lines } = capturedLog();
const loopback = useTestGateway({ withRunner: false, console: true, log });
const configured = useTestGateway({ withRunner: false, allowedHosts: ["gw.example", ".corp.example"], allowedOrigins: ["https://app.example"] });

const PLAIN_PATHS = ["/", "/console.js", "/healthz", "/readyz"];

/** What a plain GET and a WebSocket upgrade (with the right token) get with these headers. */
async function answers(gateway: TestGateway, headers: Record<string, string>): Promise<number[]> {
  const port = gateway.gateway.port;
  const plain = await Promise.all(PLAIN_PATHS.map(async (path) => (await rawGet(port, path, { headers })).status));
  const upgrade = (await rawGet(port, `/?tkn=${gateway.token}`, { headers, upgrade: true })).status;
  return [...plain, upgrade];
}

describe("the Host header, by default", () => {
  it("refuses another name (DNS rebinding) with 403 on the console, the probes and the upgrade, and says so", async () => {
    expect(await answers(loopback, { host: `evil.example:${loopback.gateway.port}` })).toEqual([403, 403, 403, 403, 403]);
    const refused = await rawGet(loopback.gateway.port, "/readyz", { headers: { host: "evil.example" } });
    expect(refused.body).toBe('Forbidden: the host "evil.example" is not one this gateway serves (add it to --allowed-hosts).\n');
    expect(lines.filter((line) => line.level === 40 && String(line.msg).startsWith("refused a request"))[0]).toMatchObject({ host: "evil.example:" + loopback.gateway.port });
  });

  it("accepts localhost and any address, on any port (port forwarding), and no other name", async () => {
    const port = loopback.gateway.port;
    for (const host of [`localhost:${port}`, "localhost", `127.0.0.1:${port}`, "[::1]:8080", "10.1.2.3:7071", "LOCALHOST:1"]) {
      expect(await answers(loopback, { host }), host).toEqual([200, 200, 200, 200, 101]);
    }
    for (const host of ["localhost.evil.example", "127.0.0.1.evil.example", "a b", "evil.example@127.0.0.1", "localhost/x"]) {
      expect((await rawGet(port, "/healthz", { headers: { host } })).status, host).toBe(403);
    }
  });
});

describe("the Origin header, by default", () => {
  it("refuses a page of another origin opening a WebSocket, even with the token", async () => {
    const host = `127.0.0.1:${loopback.gateway.port}`;
    for (const origin of ["http://evil.example", `http://evil.example:${loopback.gateway.port}`, "null", `http://127.0.0.1:${loopback.gateway.port + 1}`, `http://localhost:${loopback.gateway.port}`]) {
      expect((await rawGet(loopback.gateway.port, `/?tkn=${loopback.token}`, { headers: { host, origin }, upgrade: true })).status, origin).toBe(403);
    }
    await expect(AhpTestClient.connect(loopback.url, { origin: "https://evil.example" })).rejects.toThrow("HTTP 403");
  });

  it("accepts the page's own origin (the console) and no Origin at all (ahp-term and other programs)", async () => {
    const own = await AhpTestClient.connect(loopback.url, { origin: `http://127.0.0.1:${loopback.gateway.port}` });
    const program = await AhpTestClient.connect(loopback.url);
    expect(await own.call("ping")).toBeNull();
    expect(await program.call("ping")).toBeNull();
    // The console's module script is fetched with its own origin too.
    expect((await rawGet(loopback.gateway.port, "/console.js", { headers: { host: `localhost:${loopback.gateway.port}`, origin: `http://localhost:${loopback.gateway.port}` } })).status).toBe(200);
    own.close();
    program.close();
  });
});

describe("--allowed-hosts and --allowed-origins", () => {
  it("add names, domains with their subdomains, and origins, and nothing else", async () => {
    for (const host of ["gw.example", "gw.example:443", "corp.example", "a.b.corp.example", "localhost", "10.0.0.1"]) {
      expect(await answers(configured, { host }), host).toEqual([200, 200, 200, 200, 101].map((status, i) => (i === 0 || i === 1 ? 426 : status)));
    }
    for (const host of ["evilcorp.example", "gw.example.evil", "example"]) expect((await rawGet(configured.gateway.port, "/healthz", { headers: { host } })).status, host).toBe(403);
    const upgrade = (host: string, origin: string): Promise<number> => rawGet(configured.gateway.port, `/?tkn=${configured.token}`, { headers: { host, origin }, upgrade: true }).then((answer) => answer.status);
    expect(await upgrade("gw.example", "https://app.example")).toBe(101);
    expect(await upgrade("gw.example", "https://gw.example")).toBe(101);
    expect(await upgrade("gw.example", "https://app.example:8443")).toBe(403);
    expect(await upgrade("gw.example", "http://app.example")).toBe(403);
  });
});
