import { describe, expect, it } from "vitest";
import { grantsOfRoles } from "../../../gateway/auth/grants.js";
import { hashSecret, parseUsersFile, secretMatches } from "../../../gateway/auth/users-file.js";

describe("roles and grants", () => {
  it("gives admin and member every grant, guest none, and expands groups", () => {
    const unknown: string[] = [];
    expect([...grantsOfRoles(["member"], {}, (role) => unknown.push(role))].sort()).toEqual(
      ["terminal:claim", "terminal:clear", "terminal:create", "terminal:dispose", "terminal:input", "terminal:output", "terminal:rename", "terminal:resize"],
    );
    expect(grantsOfRoles(["guest"], {}, () => {}).size).toBe(0);
    expect([...grantsOfRoles(["reader"], { reader: ["terminal:read"] }, () => {})]).toEqual(["terminal:output"]);
    expect(unknown).toEqual([]);
  });

  it("lets a custom role override a built-in one of the same name, and reports a role nothing defines", () => {
    const unknown: string[] = [];
    expect([...grantsOfRoles(["member", "ghost"], { member: ["terminal:input"] }, (role) => unknown.push(role))]).toEqual(["terminal:input"]);
    expect(unknown).toEqual(["ghost"]);
  });
});

describe("the users file", () => {
  it("reads users and custom roles", () => {
    const file = parseUsersFile(JSON.stringify({ users: [{ id: "a", roles: ["member"], token: hashSecret("s"), expiresAt: "2030-01-01T00:00:00Z", unixUser: "ana" }], roles: { r: ["terminal:write"] } }));
    expect(file.users[0]).toMatchObject({ id: "a", roles: ["member"], expiresAt: "2030-01-01T00:00:00Z", unixUser: "ana" });
    expect(file.roles).toEqual({ r: ["terminal:write"] });
  });

  it("refuses anything malformed, naming the problem", () => {
    const bad: Array<[string, RegExp]> = [
      ["[", /not JSON/],
      ["{}", /"users" list/],
      ['{"users":[{"id":"a b","roles":[]}]}', /id of letters/],
      ['{"users":[{"id":"a","roles":[]},{"id":"a","roles":[]}]}', /appears twice/],
      ['{"users":[{"id":"a","roles":"member"}]}', /list of roles/],
      ['{"users":[{"id":"a","roles":[],"token":"plain"}]}', /sha256/],
      ['{"users":[{"id":"a","roles":[],"expiresAt":"soon"}]}', /ISO 8601/],
      ['{"users":[],"roles":{"r":["terminal:fly"]}}', /known grants/],
      ['{"users":[{"id":"a","roles":[],"unixUser":"-rf"}]}', /unixUser must be a Unix account name/],
      ['{"users":[{"id":"a","roles":[],"unixUser":"a b"}]}', /unixUser/],
      ['{"users":[{"id":"a","roles":[],"unixUser":7}]}', /unixUser/],
    ];
    for (const [text, message] of bad) expect(() => parseUsersFile(text), text).toThrow(message);
  });

  it("matches secrets against their stored hash only", () => {
    expect(secretMatches("s3cret", hashSecret("s3cret"))).toBe(true);
    expect(secretMatches("s3cret", hashSecret("other"))).toBe(false);
    expect(secretMatches("s3cret", undefined)).toBe(false);
  });
});
