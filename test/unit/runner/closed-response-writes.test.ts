import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { failWritesOnClose } from "../../../services/runner/rpc/closed-response-writes.js";

/** The part of a response the rule reads: its events and whether it finished. */
function fakeResponse(writableFinished: boolean): ServerResponse {
  return Object.assign(new EventEmitter(), { writableFinished }) as unknown as ServerResponse;
}

describe("failWritesOnClose", () => {
  it("fails a write that waits for room once the response closes unfinished, as a stream that is gone", () => {
    const response = fakeResponse(false);
    failWritesOnClose(response);
    const errors: unknown[] = [];
    response.once("error", (err) => errors.push(err));
    response.emit("close");
    expect(errors).toEqual([expect.objectContaining({ code: "ERR_STREAM_DESTROYED" })]);
  });

  it("leaves a finished response, and one nobody waits on, alone", () => {
    const finished = fakeResponse(true);
    failWritesOnClose(finished);
    const errors: unknown[] = [];
    finished.once("error", (err) => errors.push(err));
    finished.emit("close");
    expect(errors).toEqual([]);
    // No listener: emitting 'error' would throw from the close event.
    const unwatched = fakeResponse(false);
    failWritesOnClose(unwatched);
    expect(() => unwatched.emit("close")).not.toThrow();
  });
});
