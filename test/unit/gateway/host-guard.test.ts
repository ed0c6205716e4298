import { describe, expect, it } from "vitest";
import { createHostGuard, normalizedHostPattern, normalizedOrigin } from "../../../gateway/wire/host-guard.js";

describe("createHostGuard", () => {
  const guard = createHostGuard({ allowedHosts: [], allowedOrigins: [], boundHost: "Build-Box.lan" });

  it("allows the bound host by name, loopback names and addresses, whatever the port", () => {
    for (const host of ["build-box.lan:7071", "BUILD-BOX.LAN", "localhost:9", "127.0.0.1", "[::1]:7071", "192.168.1.20:80"]) expect(guard({ host }), host).toBeUndefined();
    expect(guard({ host: "other.lan" })).toMatch(/"other.lan" is not one this gateway serves/);
    expect(guard({})).toMatch(/Host header "" is not a host name/);
  });

  it("allows an Origin naming the same host and port as the Host header, or none", () => {
    expect(guard({ host: "localhost:7071", origin: "http://localhost:7071" })).toBeUndefined();
    expect(guard({ host: "localhost:7071", origin: "https://localhost:7071" })).toBeUndefined();
    expect(guard({ host: "localhost:7071" })).toBeUndefined();
    expect(guard({ host: "localhost:7071", origin: "http://localhost:7072" })).toMatch(/origin "http:\/\/localhost:7072" may not connect/);
    expect(guard({ host: "localhost:7071", origin: "http://127.0.0.1:7071" })).toBeDefined();
    expect(guard({ host: "localhost:7071", origin: "null" })).toBeDefined();
    expect(guard({ host: "localhost:7071", origin: ["http://localhost:7071", "http://localhost:7071"] })).toBeDefined();
  });

  it("lets * allow any host or any origin", () => {
    const open = createHostGuard({ allowedHosts: ["*"], allowedOrigins: ["*"], boundHost: "0.0.0.0" });
    expect(open({ host: "evil.example", origin: "https://evil.example.net" })).toBeUndefined();
  });
});

describe("flag entries", () => {
  it("take host names, addresses, .domains and *, lowercased, and refuse ports, schemes and paths", () => {
    expect(["A.Example", ".corp.example", "*", "10.0.0.1", "[::1]"].map(normalizedHostPattern)).toEqual(["a.example", ".corp.example", "*", "10.0.0.1", "[::1]"]);
    for (const entry of ["a.example:443", "https://a.example", "a.example/x", "", "a b", "::1"]) expect(normalizedHostPattern(entry), entry).toBeUndefined();
  });

  it("take origins as browsers send them, and refuse paths and opaque origins", () => {
    expect(["https://X.example", "https://x.example:443", "http://x.example:8080", "*"].map(normalizedOrigin)).toEqual(["https://x.example", "https://x.example", "http://x.example:8080", "*"]);
    for (const entry of ["x.example", "https://x.example/", "https://x.example/app", "null", "file:///tmp/a"]) expect(normalizedOrigin(entry), entry).toBeUndefined();
  });
});
