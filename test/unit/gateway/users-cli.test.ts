import { describe, expect, it } from "vitest";
import { runUsersCommand, USERS_USAGE } from "../../../gateway/auth/users-cli.js";

/** Runs a users command, collecting what it prints. */
function users(...argv: string[]): { code: number; out: string; err: string } {
  let out = "";
  let err = "";
  const code = runUsersCommand(argv, {}, { out: (text) => void (out += text), err: (text) => void (err += text) });
  return { code, out, err };
}

describe("users --help", () => {
  it("prints the usage on stdout and exits 0, alone or after a command", () => {
    expect(users("--help")).toEqual({ code: 0, out: `${USERS_USAGE}\n`, err: "" });
    expect(users("add", "--help")).toEqual({ code: 0, out: `${USERS_USAGE}\n`, err: "" });
  });

  it("still refuses a missing command with the usage on stderr", () => {
    expect(users()).toMatchObject({ code: 2, out: "", err: expect.stringContaining("users: no command") });
  });
});
