import { describe, expect, it } from "vitest";
import { looksSecret, REDACTED, redactedEnvironment } from "../../../lib/secret-names.js";

describe("looksSecret", () => {
  it("matches the secret-looking parts anywhere in a name, in any case", () => {
    for (const name of ["GITHUB_TOKEN", "db_password", "MYSQL_PASSWD", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "HTTP_AUTHORIZATION", "GOOGLE_APPLICATION_CREDENTIALS", "GPG_PASSPHRASE", "SESSION_COOKIE", "PRIVATE_KEY_PATH", "WEBHOOK_SIGNATURE"]) {
      expect(looksSecret(name), name).toBe(true);
    }
  });

  it("leaves ordinary names alone", () => {
    for (const name of ["PATH", "HOME", "TERM", "EDITOR", "LANG", "PWD", "SHELL"]) expect(looksSecret(name), name).toBe(false);
  });
});

describe("redactedEnvironment", () => {
  it("replaces only the values of secret-looking names, keeping every name", () => {
    expect(redactedEnvironment({ API_TOKEN: "t", EDITOR: "vi" })).toEqual({ API_TOKEN: REDACTED, EDITOR: "vi" });
  });
});
