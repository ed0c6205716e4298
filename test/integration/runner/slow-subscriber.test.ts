import { describe, expect, it } from "vitest";
import { TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { collect, runToExit, useTestRunner } from "./harness.js";

const runner = useTestRunner({ retainBytes: 256 * 1024 });

describe("a subscriber that reads nothing", () => {
  it("stalls neither the process nor other subscribers, and falls behind into a gap", async () => {
    const { terminal } = await runner.grpc.spawn({ command: "yes", mode: TerminalMode.PIPES });
    const id = terminal!.id;
    const stuck = runner.grpc.attach({ id, follow: true })[Symbol.asyncIterator]();
    const first = await stuck.next();
    expect(first.done).toBe(false);

    // Another subscriber keeps reading far past anything the stuck one's HTTP/2 window could hold.
    const target = 16 * 1024 * 1024;
    const reader = await collect(runner.connect.attach({ id, follow: true }), (_, totalBytes) => totalBytes >= target);
    expect(reader.output.length).toBeGreaterThanOrEqual(target);
    const { terminal: info } = await runner.grpc.get({ id });
    expect(Number(info!.endOffset)).toBeGreaterThan(target);
    expect(runner.registry.get(id).log.retainedBytes).toBeLessThanOrEqual(256 * 1024);

    // The process was never stopped: ^C-like signals still work at once.
    await runner.grpc.signal({ id, signal: "SIGINT" });
    const { exit } = await runToExit(runner.grpc, id);
    expect(exit).toEqual(expect.objectContaining({ exitCode: 128, signal: "SIGINT" }));

    // When the stuck subscriber reads again, it is told what it missed instead of getting it silently.
    let sawGap = false;
    for (let next = await stuck.next(); !next.done; next = await stuck.next()) {
      if (next.value.event.case === "gap") sawGap = true;
      if (next.value.event.case === "exited") break;
    }
    expect(sawGap).toBe(true);
  });
});
