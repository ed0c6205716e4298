import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AttachResponseSchema } from "../../../gen/terminal/v1/terminal_pb.js";
import { outputBytes } from "../log/output-log.js";
import type { AttachEvent } from "../terminal/attach-stream.js";

/** An Attach event as the wire carries it (Attach sends it alone, Follow inside a FollowEvent). */
export function attachResponseFrom({ offset, event }: AttachEvent): MessageInitShape<typeof AttachResponseSchema> {
  const at = BigInt(offset);
  switch (event.kind) {
    case "output":
      return { offset: at, event: { case: "output", value: { data: outputBytes(event), endOffset: BigInt(event.end) } } };
    case "gap":
      return { offset: at, event: { case: "gap", value: { fromOffset: BigInt(event.from), toOffset: BigInt(event.to) } } };
    case "resized":
      return { offset: at, event: { case: "resized", value: { cols: event.cols, rows: event.rows } } };
    case "title_changed":
      return { offset: at, event: { case: "titleChanged", value: { title: event.title } } };
    case "cleared":
      return { offset: at, event: { case: "cleared", value: {} } };
    case "heartbeat":
      return { offset: at, event: { case: "heartbeat", value: {} } };
    case "command_detection_available":
      return { offset: at, event: { case: "commandDetectionAvailable", value: {} } };
    case "command_executed":
      return {
        offset: at,
        event: { case: "commandExecuted", value: { commandId: event.commandId, commandLine: event.commandLine, timestampMs: BigInt(event.timestampMs) } },
      };
    case "command_finished":
      return {
        offset: at,
        event: { case: "commandFinished", value: { commandId: event.commandId, exitCode: event.exitCode, durationMs: BigInt(event.durationMs) } },
      };
    case "cwd_changed":
      return { offset: at, event: { case: "cwdChanged", value: { cwd: event.cwd } } };
    case "exited":
      return { offset: at, event: { case: "exited", value: { exitCode: event.exitCode, signal: event.signal } } };
  }
}
