/** A JSON-RPC error: a code, a message for people, and optional structured data (what a host answers with, and what a client is refused with). */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "JsonRpcError";
  }
}
