import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { failWritesOnClose } from "../../../services/runner/rpc/closed-response-writes.js";

/** Closes a response the rule watches, finished or not, with a write waiting on it or none; returns the errors that write was given. */
function closeWatched(writableFinished: boolean, writeWaiting: boolean): unknown[] {
  const response = Object.assign(new EventEmitter(), { writableFinished }) as unknown as ServerResponse;
  failWritesOnClose(response);
  const errors: unknown[] = [];
  if (writeWaiting) response.once("error", (err) => errors.push(err));
  response.emit("close");
  return errors;
}

describe("failWritesOnClose", () => {
  it("fails a write that waits for room once the response closes unfinished, as a stream that is gone", () => {
    expect(closeWatched(false, true)).toEqual([expect.objectContaining({ code: "ERR_STREAM_DESTROYED" })]);
  });

  it("leaves a finished response alone, and emits nothing where no write waits (an unheard 'error' would throw)", () => {
    expect(closeWatched(true, true)).toEqual([]);
    expect(() => closeWatched(false, false)).not.toThrow();
  });
});
