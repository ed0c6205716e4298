import { describe, expect, it } from "vitest";
import { jsonShapeFault, MAX_JSON_DEPTH, MAX_JSON_VALUES } from "../../../ahp/json-shape.js";

const limits = (maxDepth: number, maxValues = 1_000_000) => ({ maxDepth, maxValues });

describe("jsonShapeFault: depth", () => {
  it("counts arrays and objects, up to the bound and one past it", () => {
    const nested = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    expect(jsonShapeFault(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(jsonShapeFault(nested(MAX_JSON_DEPTH + 1))).toBe(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    expect(jsonShapeFault('{"a":{"b":[1,{"c":2}]}}', limits(3))).toBe("nested deeper than 3 levels");
    expect(jsonShapeFault('{"a":{"b":[1,{"c":2}]}}', limits(4))).toBeUndefined();
    // Siblings do not add up: depth goes down again when a level closes.
    expect(jsonShapeFault("[[],[],[],[]]", limits(2))).toBeUndefined();
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(jsonShapeFault(JSON.stringify({ text: "[".repeat(1000) }))).toBeUndefined();
    expect(jsonShapeFault(JSON.stringify({ text: 'a\\"[[[[' + '\\\\"' }), limits(1))).toBeUndefined();
    expect(jsonShapeFault(`["\\\\", [[]]]`, limits(2))).toBeDefined();
    expect(jsonShapeFault(`["\\"", [[]]]`, limits(3))).toBeUndefined();
  });

  it("stops at the first level too deep, and leaves malformed text to the parser", () => {
    expect(jsonShapeFault("[".repeat(5_000_000))).toBe(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    expect(jsonShapeFault('["unterminated')).toBeUndefined();
  });
});

describe("jsonShapeFault: values", () => {
  it("counts every array, object, string, number and literal, not keys, up to the bound and one past it", () => {
    const items = (count: number): string => `[${"{},".repeat(count - 1)}{}]`;
    // The outer array and `count` objects.
    expect(jsonShapeFault(items(MAX_JSON_VALUES - 1))).toBeUndefined();
    expect(jsonShapeFault(items(MAX_JSON_VALUES))).toBe(`more than ${MAX_JSON_VALUES} JSON values`);
    const mixed = '[12345, -1.5e+10, true, false, null, "s", {"key": "v", "k2": [0]}]';
    expect(jsonShapeFault(mixed, limits(10, 11))).toBeUndefined();
    expect(jsonShapeFault(mixed, limits(10, 10))).toBe("more than 10 JSON values");
    expect(jsonShapeFault('{"a":1,"b":2,"c":{}}', limits(10, 4))).toBeUndefined();
    expect(jsonShapeFault('{"a":1,"b":2,"c":{}}', limits(10, 3))).toBe("more than 3 JSON values");
  });

  it("counts a string as one value whatever it holds, so a pasted megabyte passes", () => {
    const paste = JSON.stringify({ jsonrpc: "2.0", method: "dispatchAction", params: { channel: "ahp-terminal:/t", clientSeq: 1, action: { type: "terminal/input", data: "{},[],\"x\",\n".repeat(100_000) } } });
    expect(jsonShapeFault(paste)).toBeUndefined();
    // The message, params and action objects and six scalars, the paste among them.
    expect(jsonShapeFault(paste, limits(MAX_JSON_DEPTH, 9))).toBeUndefined();
    expect(jsonShapeFault(paste, limits(MAX_JSON_DEPTH, 8))).toBe("more than 8 JSON values");
  });
});
