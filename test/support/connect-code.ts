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

/** The Connect code and message a call failed with, or undefined when it succeeded. */
export async function failureOf(promise: Promise<unknown>): Promise<{ code: Code; message: string } | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    const error = ConnectError.from(err);
    return { code: error.code, message: error.rawMessage };
  }
}
