import { ErrorCode } from "../../ahp/error-codes.js";
import { JsonRpcError } from "../../ahp/json-rpc-error.js";

/** The params as an object; -32602 when they are not one. */
export function objectParams(params: unknown, method: string): Record<string, unknown> {
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    throw new JsonRpcError(ErrorCode.InvalidParams, `${method} needs an object of params`);
  }
  return params as Record<string, unknown>;
}

/** A required string field; -32602 naming it otherwise. */
export function stringField(params: Record<string, unknown>, key: string, method: string): string {
  const value = params[key];
  if (typeof value !== "string" || value === "") throw new JsonRpcError(ErrorCode.InvalidParams, `${method} needs a non-empty string "${key}"`);
  return value;
}

/** An optional string field; -32602 when present and not a string. */
export function optionalString(params: Record<string, unknown>, key: string, method: string): string | undefined {
  const value = params[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new JsonRpcError(ErrorCode.InvalidParams, `${method}: "${key}" must be a string`);
  return value;
}

/** A list of strings; -32602 otherwise. */
export function stringList(params: Record<string, unknown>, key: string, method: string, required: boolean): string[] {
  const value = params[key];
  if (value === undefined && !required) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
    throw new JsonRpcError(ErrorCode.InvalidParams, `${method}: "${key}" must be a list of strings`);
  }
  return value as string[];
}
