import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../lib/cli.js";
import { EXIT_CODES } from "../../../lib/exit-codes.js";
import { listen } from "../../../lib/listen.js";
import { listenFailure } from "../../../lib/listen-failure.js";

const flags = { port: "--port 7070", host: "--host 127.0.0.1" };

/** The error Node gives a listen() that fails with `code`. */
function listenError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`listen ${code}`), { code, syscall: "listen" });
}

describe("listenFailure", () => {
  it("turns a taken port into one line naming the flag, with the exit code for addresses", async () => {
    const taken = createServer();
    const { port } = await listen(taken, 0, "127.0.0.1");
    const err = await listen(createServer(), port, "127.0.0.1").catch((caught: unknown) => caught);
    taken.close();
    const failure = listenFailure({ port: `--port ${port}`, host: "--host 127.0.0.1" }, err) as ConfigError;
    expect(failure).toBeInstanceOf(ConfigError);
    expect(EXIT_CODES[failure.kind]).toBe(5);
    expect(failure.message).toBe(`--port ${port}: the port is already in use on 127.0.0.1; stop what listens there, or choose another port (0 picks a free one)`);
  });

  it("says what to do for a reserved port, a foreign address and a name that does not resolve", () => {
    expect((listenFailure(flags, listenError("EACCES")) as Error).message).toMatch(/^--port 7070: this account may not listen on that port .* choose one from 1024 up$/);
    expect((listenFailure(flags, listenError("EADDRNOTAVAIL")) as Error).message).toMatch(/^--host 127.0.0.1: not an address of this machine/);
    expect((listenFailure(flags, Object.assign(new Error("getaddrinfo ENOTFOUND x"), { code: "ENOTFOUND", syscall: "getaddrinfo" })) as Error).message).toMatch(/does not resolve \(ENOTFOUND\)/);
  });

  it("leaves errors that did not come from listening as they are", () => {
    const other = new Error("something else");
    expect(listenFailure(flags, other)).toBe(other);
  });
});
