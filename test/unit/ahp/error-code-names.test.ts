import { describe, expect, it } from "vitest";
import { ErrorCode, errorCodeName } from "../../../ahp/error-codes.js";

describe("errorCodeName", () => {
  it("spells every code the way gRPC spells its codes", () => {
    expect(errorCodeName(ErrorCode.InvalidParams)).toBe("INVALID_PARAMS");
    expect(errorCodeName(ErrorCode.MethodNotFound)).toBe("METHOD_NOT_FOUND");
    expect(errorCodeName(ErrorCode.UnsupportedProtocolVersion)).toBe("UNSUPPORTED_PROTOCOL_VERSION");
    expect(errorCodeName(ErrorCode.PermissionDenied)).toBe("PERMISSION_DENIED");
    for (const code of Object.values(ErrorCode)) expect(errorCodeName(code)).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
  });

  it("gives codes outside the table one name, so clients cannot mint label values", () => {
    expect(errorCodeName(-1)).toBe("UNKNOWN");
    expect(errorCodeName(12345)).toBe("UNKNOWN");
  });
});
