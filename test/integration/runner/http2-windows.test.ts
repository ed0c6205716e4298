import http2 from "node:http2";
import { describe, expect, it } from "vitest";
import { useTestRunner } from "./harness.js";

const runner = useTestRunner();

describe("the runner's HTTP/2 receive windows", () => {
  it("are wider than HTTP/2's 64 KiB default, so input on many streams does not wait for window updates", async () => {
    const session = http2.connect(runner.server.url);
    try {
      await new Promise<void>((resolve, reject) => session.once("remoteSettings", () => resolve()).once("error", reject));
      // The connection window is opened right after the handshake; a ping round trip proves the update arrived.
      await new Promise<void>((resolve, reject) => session.ping((err) => (err ? reject(err) : resolve())));
      expect(session.remoteSettings.initialWindowSize).toBe(1024 * 1024);
      expect(session.state.remoteWindowSize).toBe(16 * 1024 * 1024);
    } finally {
      session.close();
    }
  });
});
