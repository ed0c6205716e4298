import type { MessageInitShape } from "@bufbuild/protobuf";
import { ChangeKind, type WatchResponseSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import type { RecordChange } from "../terminal/terminal.js";
import type { WatchEvent } from "../terminal/watch-stream.js";
import { terminalInfoFromSnapshot } from "./terminal-info.js";

const KIND_OF_CHANGE: Record<RecordChange, ChangeKind> = {
  spawned: ChangeKind.SPAWNED,
  labels: ChangeKind.LABELS,
  resized: ChangeKind.RESIZED,
  title: ChangeKind.TITLE,
  cwd: ChangeKind.CWD,
  exited: ChangeKind.EXITED,
  closed: ChangeKind.CLOSED,
};

/** The RPC message for one event of a Watch stream. */
export function watchResponseFrom(event: WatchEvent): MessageInitShape<typeof WatchResponseSchema> {
  switch (event.kind) {
    case "listed":
      return { sequence: BigInt(event.sequence), event: { case: "listed", value: { terminals: event.terminals.map(terminalInfoFromSnapshot) } } };
    case "synced":
      return { sequence: BigInt(event.sequence), event: { case: "synced", value: { epoch: event.epoch, restarted: event.restarted, resumed: event.resumed } } };
    case "changed":
      return {
        sequence: BigInt(event.entry.sequence),
        event: { case: "changed", value: { kind: KIND_OF_CHANGE[event.entry.change], terminal: terminalInfoFromSnapshot(event.entry.terminal) } },
      };
    case "heartbeat":
      return { sequence: BigInt(event.sequence), event: { case: "heartbeat", value: {} } };
  }
}
