import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { GRPC_CODE_NAMES, GRPC_OK, grpcCodeNameOf } from "../../../lib/grpc-code-names.js";

describe("gRPC code names", () => {
  it("names every code the way gRPC spells it", () => {
    const codes = Object.values(Code).filter((value): value is Code => typeof value === "number");
    expect(codes).toHaveLength(16);
    for (const code of codes) {
      // connect's enum key in SCREAMING_SNAKE, except the one gRPC spells with two Ls.
      const snake = Code[code].replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase();
      expect(GRPC_CODE_NAMES[code]).toBe(code === Code.Canceled ? "CANCELLED" : snake);
    }
    expect(GRPC_OK).toBe("OK");
  });

  it("names the code of a failure, and anything that is not a ConnectError as UNKNOWN", () => {
    expect(grpcCodeNameOf(new ConnectError("x", Code.FailedPrecondition))).toBe("FAILED_PRECONDITION");
    expect(grpcCodeNameOf(new ConnectError("x", Code.Canceled))).toBe("CANCELLED");
    expect(grpcCodeNameOf(new Error("boom"))).toBe("UNKNOWN");
  });
});
