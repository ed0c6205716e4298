import { readSync } from "node:fs";

/** Size of each synchronous read while draining. */
const DRAIN_READ_BYTES = 64 * 1024;

/**
 * Reads whatever the kernel still holds for a non-blocking descriptor, synchronously, until it
 * reports nothing more (EAGAIN), end of input or EIO (a pty whose other side is closed and empty).
 * Used just before a read stream is torn down, so bytes its event loop had not yet picked up are kept.
 */
export function drainFd(fd: number, push: (data: Buffer) => void): void {
  const buffer = Buffer.allocUnsafe(DRAIN_READ_BYTES);
  for (;;) {
    let read: number;
    try {
      read = readSync(fd, buffer, 0, buffer.length, null);
    } catch {
      return;
    }
    if (read === 0) return;
    push(Buffer.from(buffer.subarray(0, read)));
  }
}
