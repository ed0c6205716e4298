import { describe, expect, it } from "vitest";
import { CliError, targetFrom } from "../../../cli/connection.js";

describe("the gateway ahp-term is told of", () => {
  it("takes the URL npm start prints, a bare host:port with a token, and the console's http(s) address as its WebSocket one", () => {
    expect(targetFrom({ url: "ws://127.0.0.1:7071/?tkn=abc" }, {})).toEqual({ url: "ws://127.0.0.1:7071/?tkn=abc" });
    expect(targetFrom({ url: "127.0.0.1:7071", token: "abc" }, {})).toEqual({ url: "ws://127.0.0.1:7071/?tkn=abc" });
    expect(targetFrom({}, { AHP_URL: "https://gw.example:8443/", AHP_TOKEN: "abc", AHP_USER_TOKEN: "secret" })).toEqual({ url: "wss://gw.example:8443/?tkn=abc", userToken: "secret" });
    expect(targetFrom({ url: "http://127.0.0.1:7071/?tkn=abc" }, {}).url).toBe("ws://127.0.0.1:7071/?tkn=abc");
  });

  it("says what is wrong with another scheme, a missing token, or no gateway at all", () => {
    expect(() => targetFrom({ url: "ftp://127.0.0.1:7071/?tkn=abc" }, {})).toThrow(new CliError("the gateway's URL starts with ws:// (wss:// with TLS), as npm start prints it; got ftp:// in ftp://127.0.0.1:7071/?tkn=abc"));
    expect(() => targetFrom({ url: "http://127.0.0.1:7071/" }, {})).toThrow(/^no connection token: use the URL npm start prints \(it ends in \?tkn=TOKEN\), or pass --token TOKEN or set AHP_TOKEN$/);
    expect(() => targetFrom({ url: "ws://127.0.0.1:7071/?tkn=" }, {})).toThrow(/no connection token/);
    expect(() => targetFrom({}, {})).toThrow(/no gateway/);
  });
});
