import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { corkForTurn } from "../../../gateway/wire/turn-cork.js";

/** A stream that records each write it was handed: one entry per system call a socket would make. */
function recordingStream() {
  const calls: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      calls.push([chunk.toString()]);
      done();
    },
    writev(chunks, done) {
      calls.push(chunks.map(({ chunk }) => (chunk as Buffer).toString()));
      done();
    },
  });
  return { stream, calls };
}

const turnEnds = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("corkForTurn", () => {
  it("sends one turn's writes in one call, and the next turn's in their own", async () => {
    const { stream, calls } = recordingStream();
    const cork = corkForTurn(stream);
    for (const frame of ["a", "b", "c"]) {
      cork();
      stream.write(frame);
    }
    expect(calls).toEqual([]);
    await turnEnds();
    expect(calls).toEqual([["a", "b", "c"]]);
    cork();
    stream.write("d");
    await turnEnds();
    expect(calls).toEqual([["a", "b", "c"], ["d"]]);
  });

  it("keeps writes that cork the stream themselves (a WebSocket frame's header and payload) in the turn's call", async () => {
    const { stream, calls } = recordingStream();
    const cork = corkForTurn(stream);
    for (const frame of ["1", "2"]) {
      cork();
      stream.cork();
      stream.write(`header${frame}`);
      stream.write(`payload${frame}`);
      stream.uncork();
    }
    await turnEnds();
    expect(calls).toEqual([["header1", "payload1", "header2", "payload2"]]);
  });
});
