import { describe, expect, it } from "vitest";
import { createPtyInput, type PtyMaster } from "../../../services/runner/process/pty-input.js";

/** A master whose kernel input buffer takes `room` bytes before it refuses (EAGAIN), and a queued writer like node-pty's. */
function fakeMaster(room: number) {
  const kernel: string[] = [];
  const queue: Buffer[] = [];
  let open = true;
  const master: PtyMaster = { fd: 42, isOpen: () => open, queued: { _writeQueue: queue }, write: (data) => void queue.push(Buffer.from(data)) };
  const writeNow = (fd: number, data: Buffer): number => {
    expect(fd).toBe(42);
    if (room === 0) throw Object.assign(new Error("EAGAIN: resource temporarily unavailable, write"), { code: "EAGAIN" });
    const taken = Math.min(room, data.length);
    room -= taken;
    kernel.push(data.subarray(0, taken).toString());
    return taken;
  };
  return { master, kernel, queue, writeNow, makeRoom: (bytes: number) => (room += bytes), close: () => (open = false) };
}

describe("pty input", () => {
  it("writes a keystroke to the master at once when nothing waits before it", () => {
    const { master, kernel, queue, writeNow } = fakeMaster(1024);
    const write = createPtyInput(master, writeNow);
    write(Buffer.from("a"));
    write(Buffer.from("b"));
    expect(kernel).toEqual(["a", "b"]);
    expect(queue).toEqual([]);
  });

  it("queues what the kernel did not take, and everything after it, in order", () => {
    const { master, kernel, queue, writeNow, makeRoom } = fakeMaster(4);
    const write = createPtyInput(master, writeNow);
    write(Buffer.from("paste-123"));
    write(Buffer.from("x"));
    makeRoom(100);
    // Room again, but the queue is not empty: the keystroke waits behind the paste's tail.
    write(Buffer.from("y"));
    expect(kernel).toEqual(["past"]);
    expect(queue.map(String)).toEqual(["e-123", "x", "y"]);
  });

  it("queues all of a write the kernel refuses (EAGAIN)", () => {
    const { master, kernel, queue, writeNow } = fakeMaster(0);
    createPtyInput(master, writeNow)(Buffer.from("abc"));
    expect(kernel).toEqual([]);
    expect(queue.map(String)).toEqual(["abc"]);
  });

  it("never writes to the descriptor once node-pty has closed the master (its number may be another file's)", () => {
    const { master, kernel, queue, writeNow, close } = fakeMaster(1024);
    const write = createPtyInput(master, writeNow);
    close();
    write(Buffer.from("late"));
    expect(kernel).toEqual([]);
    expect(queue.map(String)).toEqual(["late"]);
  });

  it("leaves any other error to node-pty's writer, which reports it", () => {
    const { master, queue } = fakeMaster(10);
    createPtyInput(master, () => {
      throw Object.assign(new Error("EIO: i/o error, write"), { code: "EIO" });
    })(Buffer.from("abc"));
    expect(queue.map(String)).toEqual(["abc"]);
  });

  it("goes through the queue when node-pty's queue cannot be seen", () => {
    const { kernel, writeNow } = fakeMaster(10);
    const queued: Buffer[] = [];
    createPtyInput({ fd: 42, isOpen: () => true, queued: {}, write: (data) => void queued.push(data) }, writeNow)(Buffer.from("abc"));
    expect(kernel).toEqual([]);
    expect(queued.map(String)).toEqual(["abc"]);
  });
});
