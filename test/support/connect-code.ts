import { Code, ConnectError } from "@connectrpc/connect";

/** The Connect code a call failed with, or undefined when it succeeded. */
export async function codeOf(promise: Promise<unknown>): Promise<Code | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    return ConnectError.from(err).code;
  }
}
