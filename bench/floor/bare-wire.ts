import type WebSocket from "ws";

/** Bytes a WebSocket may have unsent before the bare shapes stop reading what feeds it. */
export const SOCKET_BACKLOG_BYTES = 64 * 1024;

/** A program and its arguments, as the bare shapes start one pty per connection or stream. */
export interface Program {
  file: string;
  args: string[];
}

/** The path and query that name `program`, for a WebSocket URL or an HTTP/2 `:path`. */
export function programPath({ file, args }: Program): string {
  return `/?file=${encodeURIComponent(file)}&args=${encodeURIComponent(JSON.stringify(args))}`;
}

/** The program a path from `programPath` names. */
export function programOf(path: string): Program {
  const query = new URL(path, "http://bare").searchParams;
  return { file: query.get("file") ?? "/bin/sh", args: JSON.parse(query.get("args") ?? "[]") as string[] };
}

/** Sends `data`, pausing `source` while the socket holds SOCKET_BACKLOG_BYTES unsent and resuming it once it drained below. */
export function sendPaced(socket: WebSocket, data: string | Buffer, source: { pause(): void; resume(): void }): void {
  socket.send(data, () => {
    if (socket.bufferedAmount < SOCKET_BACKLOG_BYTES) source.resume();
  });
  if (socket.bufferedAmount >= SOCKET_BACKLOG_BYTES) source.pause();
}
