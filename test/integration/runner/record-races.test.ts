import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { useTestRunner } from "./harness.js";

const runner = useTestRunner();
/** Rounds of each race: enough for a window of overlap in any of them to show. */
const ROUNDS = 40;
/** Spawns racing for the same unique value in each round, half over gRPC and half over Connect. */
const RACERS = 6;

function codesOf(results: PromiseSettledResult<unknown>[]): Array<Code | "ok"> {
  return results.map((result) => (result.status === "fulfilled" ? "ok" : ConnectError.from(result.reason).code));
}

describe("two callers writing a terminal's labels from the same revision", () => {
  it("apply exactly one of the two writes every round; the other is ABORTED", async () => {
    const { terminal } = await runner.grpc.spawn({ argv: ["sleep", "60"], mode: TerminalMode.PIPES, labels: { claim: "nobody" } });
    const id = terminal!.id;
    for (let round = 0; round < ROUNDS; round++) {
      const { terminal: read } = await runner.grpc.get({ id });
      const revision = read!.revision;
      const results = await Promise.allSettled([
        runner.grpc.setLabels({ id, set: { claim: `grpc-${round}` }, expectedRevision: revision }),
        runner.connect.setLabels({ id, set: { claim: `connect-${round}` }, expectedRevision: revision }),
      ]);
      const codes = codesOf(results);
      expect(codes.filter((code) => code === "ok"), `round ${round}: ${codes.join(", ")}`).toHaveLength(1);
      expect(codes.filter((code) => code === Code.Aborted)).toHaveLength(1);
      const winner = codes[0] === "ok" ? `grpc-${round}` : `connect-${round}`;
      const { terminal: after } = await runner.connect.get({ id });
      expect(after).toMatchObject({ revision: revision + 1n, labels: { claim: winner } });
    }
    await runner.grpc.close({ id, graceMs: 100 });
  });
});

describe("spawns racing for the same unique label value", () => {
  it("start exactly one terminal every round; the others are ALREADY_EXISTS", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const uri = `test://race/${round}`;
      const spawns = Array.from({ length: RACERS }, (_, racer) =>
        (racer % 2 ? runner.grpc : runner.connect).spawn({ argv: ["sleep", "60"], mode: TerminalMode.PIPES, labels: { uri }, uniqueLabel: "uri" }),
      );
      const results = await Promise.allSettled(spawns);
      const codes = codesOf(results);
      expect(codes.filter((code) => code === "ok"), `round ${round}: ${codes.join(", ")}`).toHaveLength(1);
      expect(codes.filter((code) => code === Code.AlreadyExists)).toHaveLength(RACERS - 1);
      const { terminals } = await runner.grpc.list({ labelSelector: { uri } });
      expect(terminals).toHaveLength(1);
      await runner.grpc.close({ id: terminals[0]!.id, graceMs: 100 });
    }
  });
});
