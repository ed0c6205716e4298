import { describe, expect, it } from "vitest";
import { JsonRpcError } from "../../../ahp/json-rpc-error.js";
import { parseResumeFrom } from "../../../gateway/handlers/resume.js";
import { parseSnapshotMeta } from "../../../gateway/handlers/snapshot-meta.js";

const refusal = (meta: unknown): JsonRpcError | undefined => {
  try {
    parseResumeFrom({ _meta: meta }, "subscribe");
    return undefined;
  } catch (err) {
    return err as JsonRpcError;
  }
};

describe("what a request's _meta asks to add to its snapshots", () => {
  it("reads resumeFrom as a map from terminal URIs to offsets, and nothing when there is none", () => {
    expect(parseResumeFrom({ _meta: { resumeFrom: { "ahp-terminal:/a": 0, "ahp-terminal:/b": 1234 } } }, "initialize")).toEqual(
      new Map([
        ["ahp-terminal:/a", 0],
        ["ahp-terminal:/b", 1234],
      ]),
    );
    for (const params of [{}, { _meta: undefined }, { _meta: "odd" }, { _meta: { screen: true } }]) expect(parseResumeFrom(params, "initialize").size).toBe(0);
  });

  it("refuses a resumeFrom that is not such a map with -32602 naming what is wrong", () => {
    for (const resumeFrom of [[1], 5, "x", null, true]) {
      expect(refusal({ resumeFrom })).toMatchObject({ code: -32602, message: "subscribe: _meta.resumeFrom must be a map from terminal URIs to output offsets" });
    }
    for (const [offset, shown] of [[-1, "-1"], [1.5, "1.5"], ["3", '"3"'], [null, "null"], [2 ** 53, String(2 ** 53)]] as const) {
      expect(refusal({ resumeFrom: { "ahp-terminal:/a": offset } })).toMatchObject({ code: -32602, message: `subscribe: _meta.resumeFrom["ahp-terminal:/a"] must be a non-negative integer offset, got ${shown}` });
    }
  });

  it("asks for screens and offsets only with true", () => {
    expect(parseSnapshotMeta({ _meta: { screen: true, offsets: true } }, "initialize")).toMatchObject({ screens: true, offsets: true });
    expect(parseSnapshotMeta({ _meta: { screen: "yes", offsets: 1 } }, "initialize")).toMatchObject({ screens: false, offsets: false });
    expect(parseSnapshotMeta({}, "initialize")).toMatchObject({ screens: false, offsets: false, resumeFrom: new Map() });
  });
});
