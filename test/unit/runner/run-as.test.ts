import { describe, expect, it } from "vitest";
import type { Account } from "../../../services/runner/spawn/accounts.js";
import { RunAsPolicy } from "../../../services/runner/spawn/run-as.js";

const accounts: Record<string, Account> = {
  ana: { name: "ana", uid: 1000, gid: 1000, groups: [1000], home: "/home/ana", shell: "/bin/bash" },
  toor: { name: "toor", uid: 0, gid: 0, groups: [0], home: "/root", shell: "/bin/sh" },
};
const lookUp = (name: string): Account | undefined => accounts[name];
const root = { uid: 0, gid: 0, groups: [0] };

describe("RunAsPolicy", () => {
  it("gives no account for an empty run_as, and the account when allowed", () => {
    const policy = new RunAsPolicy({ allowed: true, allowRoot: false }, root, lookUp);
    expect(policy.accountFor("")).toBeUndefined();
    expect(policy.accountFor("ana")).toBe(accounts.ana);
  });

  it("refuses without --allow-run-as, uid 0 without --allow-run-as-root, and unknown accounts", () => {
    expect(() => new RunAsPolicy({ allowed: false, allowRoot: false }, root, lookUp).accountFor("ana")).toThrow(expect.objectContaining({ kind: "permission_denied", message: expect.stringMatching(/--allow-run-as/) }));
    expect(() => new RunAsPolicy({ allowed: true, allowRoot: false }, root, lookUp).accountFor("toor")).toThrow(expect.objectContaining({ kind: "permission_denied", message: expect.stringMatching(/--allow-run-as-root/) }));
    expect(new RunAsPolicy({ allowed: true, allowRoot: true }, root, lookUp).accountFor("toor")).toBe(accounts.toor);
    expect(() => new RunAsPolicy({ allowed: true, allowRoot: false }, root, lookUp).accountFor("nobody")).toThrow(expect.objectContaining({ kind: "invalid_argument" }));
  });

  it("lets a runner that is not root run only as its own account", () => {
    const policy = new RunAsPolicy({ allowed: true, allowRoot: false }, { uid: 1000, gid: 1000, groups: [1000] }, lookUp);
    expect(policy.cannotSwitch).toMatch(/not root/);
    expect(policy.accountFor("ana")).toBe(accounts.ana);
    expect(() => new RunAsPolicy({ allowed: true, allowRoot: true }, { uid: 1000, gid: 1000, groups: [1000] }, lookUp).accountFor("toor")).toThrow(expect.objectContaining({ kind: "failed_precondition" }));
  });
});
