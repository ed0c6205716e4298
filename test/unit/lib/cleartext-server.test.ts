import http2 from "node:http2";
import { describe, expect, it } from "vitest";
import { createCleartextServer, protocolFromFirstBytes } from "../../../lib/cleartext-server.js";

const PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

describe("protocolFromFirstBytes", () => {
  it("waits while the bytes so far could still be the HTTP/2 preface", () => {
    expect(protocolFromFirstBytes(Buffer.alloc(0))).toBe("undecided");
    for (let length = 1; length < PREFACE.length; length++) expect(protocolFromFirstBytes(Buffer.from(PREFACE.slice(0, length)))).toBe("undecided");
  });

  it("says HTTP/2 once the whole preface is there, whatever follows it", () => {
    expect(protocolFromFirstBytes(Buffer.from(PREFACE))).toBe("http2");
    expect(protocolFromFirstBytes(Buffer.concat([Buffer.from(PREFACE), Buffer.from([0, 0, 18, 4, 0])]))).toBe("http2");
  });

  it("says HTTP/1 as soon as a byte departs from the preface", () => {
    expect(protocolFromFirstBytes(Buffer.from("POST /terminal.v1.TerminalService/List HTTP/1.1\r\n"))).toBe("http1");
    expect(protocolFromFirstBytes(Buffer.from("PU"))).toBe("http1");
    expect(protocolFromFirstBytes(Buffer.from("G"))).toBe("http1");
    expect(protocolFromFirstBytes(Buffer.from("PRI * HTTP/1.1\r\n\r\n"))).toBe("http1");
    // A TLS ClientHello on the cleartext port goes to HTTP/1.1, which answers 400.
    expect(protocolFromFirstBytes(Buffer.from([0x16, 0x03, 0x01]))).toBe("http1");
  });
});

describe("createCleartextServer", () => {
  it("lets an HTTP/1.1 request body (a client stream) take its time, but not its headers", () => {
    const { http1 } = createCleartextServer(http2.createServer(), () => {}, 8_000);
    expect(http1.requestTimeout).toBe(0);
    expect(http1.headersTimeout).toBe(8_000);
    // Node looks for late headers at this interval: its default (30 s) would let them take far longer.
    expect((http1 as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval).toBe(1_000);
    http1.close();
  });
});
