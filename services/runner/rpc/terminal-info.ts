import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { TerminalInfoSchema, TerminalState, type TerminalInfo } from "../../../gen/terminal/v1/terminal_pb.js";
import type { TerminalSnapshot } from "../terminal/terminal.js";

/** The RPC description of a terminal. */
export function terminalInfoFromSnapshot(snapshot: TerminalSnapshot): TerminalInfo {
  return create(TerminalInfoSchema, {
    id: snapshot.id,
    pid: snapshot.pid,
    isPty: snapshot.isPty,
    title: snapshot.title,
    cwd: snapshot.cwd,
    cols: snapshot.cols,
    rows: snapshot.rows,
    labels: snapshot.labels,
    state: snapshot.closed ? TerminalState.CLOSED : snapshot.exit ? TerminalState.EXITED : TerminalState.RUNNING,
    exitCode: snapshot.exit?.exitCode,
    signal: snapshot.exit?.signal ?? "",
    startOffset: BigInt(snapshot.startOffset),
    endOffset: BigInt(snapshot.endOffset),
    createdAt: timestampFromDate(snapshot.createdAt),
    exitedAt: snapshot.exitedAt ? timestampFromDate(snapshot.exitedAt) : undefined,
    argv: snapshot.argv,
    commandDetection: snapshot.commandDetection,
    runAs: snapshot.runAs,
    revision: BigInt(snapshot.revision),
  });
}
