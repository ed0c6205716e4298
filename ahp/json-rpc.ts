import { ErrorCode } from "./error-codes.js";
import { jsonShapeFault } from "./json-shape.js";
import { JsonRpcError } from "./json-rpc-error.js";

/** A JSON-RPC id: echoed exactly as received. */
export type JsonRpcId = string | number | null;

/** One JSON-RPC message, classified: what a host or a client reads from a frame. */
export type JsonRpcMessage =
  | { kind: "request"; id: JsonRpcId; method: string; params: unknown }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "result"; id: JsonRpcId; result: unknown }
  | { kind: "error"; id: JsonRpcId; error: JsonRpcError }
  | { kind: "invalid"; id: JsonRpcId; error: JsonRpcError };

/**
 * Classifies one text frame: a request (has an id), a notification (has none), a response (a
 * result or an error), or invalid — with the error to answer (`id: null` when none can be read).
 * Batches (arrays) are not supported by the protocol and are refused with -32600, as is a frame
 * nested too deep or holding too many values (found before parsing, so it costs one pass and
 * neither stalls the event loop nor grows the heap).
 */
export function parseMessage(text: string): JsonRpcMessage {
  const fault = jsonShapeFault(text);
  if (fault) return invalid(null, ErrorCode.InvalidRequest, `Invalid request: ${fault}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid(null, ErrorCode.ParseError, "Parse error: the frame is not valid JSON");
  }
  return messageFrom(value);
}

/** Classifies a frame already parsed from JSON, as `parseMessage` does. */
export function messageFrom(value: unknown): JsonRpcMessage {
  if (Array.isArray(value)) return invalid(null, ErrorCode.InvalidRequest, "Invalid request: batches are not supported");
  if (typeof value !== "object" || value === null) return invalid(null, ErrorCode.InvalidRequest, "Invalid request: expected a JSON-RPC object");
  const message = value as Record<string, unknown>;
  const hasId = "id" in message;
  const id = isId(message.id) ? message.id : null;
  if (message.jsonrpc !== "2.0") return invalid(id, ErrorCode.InvalidRequest, 'Invalid request: "jsonrpc" must be "2.0"');
  if (typeof message.method !== "string") {
    if (hasId && isObject(message.error)) return { kind: "error", id, error: errorFrom(message.error) };
    if (hasId && ("result" in message || "error" in message)) return { kind: "result", id, result: message.result };
    return invalid(id, ErrorCode.InvalidRequest, 'Invalid request: "method" must be a string');
  }
  if (hasId && !isId(message.id)) return invalid(null, ErrorCode.InvalidRequest, 'Invalid request: "id" must be a string, number or null');
  return hasId
    ? { kind: "request", id, method: message.method, params: message.params }
    : { kind: "notification", method: message.method, params: message.params };
}

/** The text of a request (`params` left out when undefined). */
export function requestFrame(id: JsonRpcId, method: string, params?: unknown): string {
  return JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
}

/** The text of a successful response. */
export function resultFrame(id: JsonRpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result: result === undefined ? null : result });
}

/** The text of an error response. */
export function errorFrame(id: JsonRpcId, error: JsonRpcError): string {
  const body: { code: number; message: string; data?: unknown } = { code: error.code, message: error.message };
  if (error.data !== undefined) body.data = error.data;
  return JSON.stringify({ jsonrpc: "2.0", id, error: body });
}

/** The text of a notification. */
export function notificationFrame(method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", method, params });
}

function invalid(id: JsonRpcId, code: number, message: string): JsonRpcMessage {
  return { kind: "invalid", id, error: new JsonRpcError(code, message) };
}

/** An error response's error as a JsonRpcError (a host that sends no code or message still fails the request). */
function errorFrom(body: Record<string, unknown>): JsonRpcError {
  const code = typeof body.code === "number" ? body.code : ErrorCode.InternalError;
  return new JsonRpcError(code, typeof body.message === "string" ? body.message : "", body.data);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) || value === null;
}
