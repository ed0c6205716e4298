import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../../ahp/error-codes.js";
import { JsonRpcError } from "../../../ahp/json-rpc-error.js";
import { ClientNames, type NamesConnection } from "../../../console/client-names.js";
import { claimText } from "../../../console/terminal-list.js";

/** A connection whose requests the test answers by hand, in order. */
function fakeConnection(): NamesConnection & { online: boolean; asked: string[][]; answer(result: unknown): Promise<void>; fail(error: Error): Promise<void> } {
  const pending: Array<{ resolve: (value: unknown) => void; reject: (error: Error) => void }> = [];
  const settled = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
  return {
    online: true,
    asked: [],
    call(method: string, params: any) {
      expect(method).toBe("x-clientNames");
      this.asked.push(params.clientIds);
      return new Promise((resolve, reject) => pending.push({ resolve, reject }));
    },
    answer(result: unknown) {
      pending.shift()!.resolve(result);
      return settled();
    },
    fail(error: Error) {
      pending.shift()!.reject(error);
      return settled();
    },
  };
}

describe("the console's names of claim holders", () => {
  it("says who holds a claim by the person and the client name, else as before", () => {
    const names: Record<string, { user?: string; client?: string }> = {
      a: { user: "alice", client: "VS Code" },
      b: { client: "VS Code" },
      c: { user: "alice" },
      "console-d": { user: "alice", client: "ahp-terminal-console" },
      "console-e": { client: "ahp-terminal-console" },
    };
    const text = (clientId: string) => claimText({ kind: "client", clientId }, "console-self", (id) => names[id]);
    expect(["a", "b", "c", "console-d", "console-e", "console-f", "x", "console-self"].map(text)).toEqual([
      "alice (VS Code)",
      "VS Code",
      "alice",
      "alice (console page)",
      "another console page",
      "another console page",
      "client x",
      "this page",
    ]);
  });

  it("asks once per new id, one request at a time, and draws again when names arrive", async () => {
    const connection = fakeConnection();
    let drawn = 0;
    const names = new ClientNames(connection, () => drawn++);
    names.want(["a", "b"]);
    names.want(["a", "c"]);
    expect(connection.asked).toEqual([["a", "b"]]);
    await connection.answer({ names: { a: { user: "alice", client: "VS Code" }, b: { user: 7 } } });
    expect(drawn).toBe(1);
    expect(names.nameOf("a")).toEqual({ user: "alice", client: "VS Code" });
    expect(names.nameOf("b")).toBeUndefined();
    // c waited for the first answer; a and b are not asked about again.
    expect(connection.asked).toEqual([["a", "b"], ["c"]]);
    await connection.answer({ names: {} });
    expect(drawn).toBe(1);
    names.want(["a", "b", "c"]);
    expect(connection.asked).toHaveLength(2);
    // A new socket: ids without a name are asked about again.
    names.retryUnnamed();
    names.want(["a", "b", "c"]);
    expect(connection.asked.at(-1)).toEqual(["b", "c"]);
  });

  it("asks again after a failed request, never again a gateway without the command, and nothing while offline", async () => {
    const connection = fakeConnection();
    const names = new ClientNames(connection, () => {});
    connection.online = false;
    names.want(["a"]);
    expect(connection.asked).toEqual([]);
    connection.online = true;
    names.want([]);
    expect(connection.asked).toEqual([["a"]]);
    await connection.fail(new Error("connection lost"));
    names.want(["a"]);
    expect(connection.asked).toEqual([["a"], ["a"]]);
    await connection.fail(new JsonRpcError(ErrorCode.MethodNotFound, "Method not found: x-clientNames"));
    names.want(["a", "b"]);
    expect(connection.asked).toHaveLength(2);
  });
});
