import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import { describe, expect, it } from "vitest";
import { AhpTestClient, RpcFailure } from "../support/ahp-test-client.js";
import { useTestGateway } from "../integration/gateway/harness.js";

const SCHEMA_DIR = join(import.meta.dirname, "fixtures/0.6.0/schema");
const load = (name: string) => JSON.parse(readFileSync(join(SCHEMA_DIR, `${name}.schema.json`), "utf8"));

/**
 * The generated 0.6.0 schemas, with two documented corrections: `ActionEnvelope.origin` is
 * "required but may be undefined" in the TypeScript source, which the generator wrote as required,
 * although round-trip fixture 025 requires server envelopes to omit it; and `StateAction` lists an
 * empty `$ref` ("#/$defs/") that matches anything and would make every `oneOf` ambiguous.
 */
function schemas() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const schema of ["actions", "commands", "errors"].map(load)) {
    const defs = schema.$defs;
    if (defs.ActionEnvelope) defs.ActionEnvelope.required = defs.ActionEnvelope.required.filter((key: string) => key !== "origin");
    if (defs.StateAction) defs.StateAction.oneOf = defs.StateAction.oneOf.filter((ref: { $ref: string }) => ref.$ref !== "#/$defs/");
    ajv.addSchema(schema);
  }
  const def = (file: string, name: string): ValidateFunction => ajv.getSchema(`https://microsoft.github.io/agent-host-protocol/schema/${file}.schema.json#/$defs/${name}`)!;
  return {
    envelope: def("actions", "ActionEnvelope"),
    result: (method: string): ValidateFunction | undefined => def("commands", `${method[0]!.toUpperCase()}${method.slice(1)}Result`),
    reconnect: [def("commands", "ReconnectReplayResult"), def("commands", "ReconnectSnapshotResult")],
    errorCode: [def("errors", "JsonRpcErrorCode"), def("errors", "AhpErrorCode")],
    errorData: { [-32005]: def("errors", "UnsupportedProtocolVersionErrorData"), [-32007]: def("errors", "AuthRequiredErrorData") } as Record<number, ValidateFunction>,
  };
}

/** Checks every frame one client received against the schemas; returns a description of each violation. */
function violations(client: AhpTestClient, sent: Map<unknown, string>, check: ReturnType<typeof schemas>): string[] {
  const problems: string[] = [];
  const report = (frame: unknown, validate: ValidateFunction, value: unknown): void => {
    if (!validate(value)) problems.push(`${JSON.stringify(frame).slice(0, 200)}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
  };
  for (const frame of client.frames as Array<Record<string, any>>) {
    if (frame.method === "action") report(frame, check.envelope, frame.params);
    else if (frame.method !== undefined) problems.push(`unexpected notification ${frame.method}`);
    else if (frame.error) {
      if (!check.errorCode.some((validate) => validate(frame.error.code))) problems.push(`unknown error code ${frame.error.code}`);
      const data = check.errorData[frame.error.code];
      if (data) report(frame, data, frame.error.data);
    } else {
      const method = sent.get(frame.id);
      if (method === "reconnect") {
        if (!check.reconnect.some((validate) => validate(frame.result))) problems.push(`reconnect result: ${JSON.stringify(frame.result).slice(0, 200)}`);
      } else if (["createTerminal", "disposeTerminal", "ping"].includes(method!)) {
        if (frame.result !== null) problems.push(`${method} must return null`);
      } else {
        const validate = check.result(method!);
        if (!validate) problems.push(`no schema for ${method}`);
        else report(frame, validate, frame.result);
      }
    }
  }
  return problems;
}

// bash, so command detection's actions are on the wire too.
const gateway = useTestGateway({ shell: "/bin/bash" });

describe("every frame the gateway sends on a 0.6.0 connection validates against the 0.6.0 schemas", () => {
  it("through a full terminal scenario", async () => {
    const check = schemas();
    const sent = new Map<unknown, string>();
    const client = await AhpTestClient.connect(gateway.url);
    const call = async (method: string, params?: unknown): Promise<any> => {
      sent.set(sent.size + 1, method);
      return client.call(method, params).catch((err: unknown) => (err instanceof RpcFailure ? err : Promise.reject(err)));
    };
    await call("ping");
    await call("initialize", { channel: "ahp-root://", protocolVersions: ["0.6.0"], clientId: "schema-client", initialSubscriptions: ["ahp-root://", "ahp-terminal:/unknown"] });
    await call("listSessions", { channel: "ahp-root://" });
    await call("authenticate", { channel: "ahp-root://", resource: "x", token: "" });
    const uri = "ahp-terminal:/schema";
    await call("createTerminal", { channel: uri, claim: { kind: "client", clientId: "schema-client" }, name: "schema", cwd: `file://${gateway.home}`, cols: 100, rows: 30 });
    expect(await call("createTerminal", { channel: uri, claim: { kind: "client", clientId: "schema-client" } })).toBeInstanceOf(RpcFailure);
    await call("subscribe", { channel: uri });
    expect(await call("subscribe", { channel: "ahp-terminal:/nope" })).toBeInstanceOf(RpcFailure);
    expect(await call("createSession", {})).toBeInstanceOf(RpcFailure);
    client.dispatch(uri, { type: "terminal/input", data: "cd /tmp; echo schema-$((6*7))\r" });
    await client.waitForOutput(uri, /schema-42/);
    await client.waitForEnvelope((envelope) => envelope.action.type === "terminal/commandFinished");
    client.dispatch(uri, { type: "terminal/resized", cols: 120, rows: 40 });
    client.dispatch(uri, { type: "terminal/titleChanged", title: "renamed" });
    client.dispatch(uri, { type: "terminal/cleared" });
    client.dispatch(uri, { type: "terminal/data", data: "forged" });
    client.dispatch(uri, { type: "terminal/claimed", claim: { kind: "session", session: "ahp-session:/s1", turnId: "t1" } });
    client.dispatch(uri, { type: "terminal/input", data: "exit 3\r" });
    await client.waitForEnvelope((envelope) => envelope.action.type === "terminal/exited");
    client.dispatch("ahp-root://", { type: "root/configChanged", config: { defaultShell: "/bin/sh" } });
    await call("disposeTerminal", { channel: uri });
    expect(await call("disposeTerminal", { channel: uri })).toBeInstanceOf(RpcFailure);
    await call("ping");

    const reconnecting = await AhpTestClient.connect(gateway.url);
    const resent = new Map<unknown, string>([[1, "reconnect"]]);
    await reconnecting.call("reconnect", { channel: "ahp-root://", clientId: "schema-client", lastSeenServerSeq: 0, subscriptions: ["ahp-root://", uri] });
    const unsupported = await AhpTestClient.connect(gateway.url);
    await unsupported.call("initialize", { channel: "ahp-root://", protocolVersions: ["999.0.0"], clientId: "old" }).catch(() => undefined);
    const broken = await AhpTestClient.connect(gateway.url);
    broken.sendRaw("{not json");
    await broken.waitFor(() => true);

    const envelopeTypes = client.envelopes().map((envelope) => envelope.action.type);
    const expectedTypes = ["root/terminalsChanged", "terminal/data", "terminal/input", "terminal/resized", "terminal/titleChanged", "terminal/cleared", "terminal/claimed", "terminal/exited", "root/configChanged"];
    expectedTypes.push("terminal/commandExecuted", "terminal/commandFinished", "terminal/cwdChanged");
    for (const type of expectedTypes) {
      expect(envelopeTypes).toContain(type);
    }
    expect(client.envelopes().some((envelope) => envelope.rejectionReason)).toBe(true);
    expect(violations(client, sent, check)).toEqual([]);
    expect(violations(reconnecting, resent, check)).toEqual([]);
    expect(violations(unsupported, new Map([[1, "initialize"]]), check)).toEqual([]);
    expect(violations(broken, new Map(), check)).toEqual([]);
    for (const socket of [client, reconnecting, unsupported, broken]) socket.close();
  });
});
