import { afterEach, describe, expect, it, vi } from "vitest";
import { SignIn } from "../../../gateway/auth/sign-in.js";

afterEach(() => vi.useRealTimers());

describe("a sign-in with a lifetime", () => {
  it("lapses at its deadline, once, and a new sign-in starts afresh", () => {
    vi.useFakeTimers();
    let lapses = 0;
    const signIn = new SignIn(undefined, () => lapses++);
    signIn.set({ kind: "user", id: "alice", credential: "sha256:a" }, Date.now() + 5_000);
    vi.advanceTimersByTime(4_999);
    expect(signIn.principal).toEqual({ kind: "user", id: "alice", credential: "sha256:a" });
    vi.advanceTimersByTime(2);
    expect(lapses).toBe(1);
    expect(signIn.principal).toBeUndefined();
    signIn.set({ kind: "user", id: "alice", credential: "sha256:a" });
    vi.advanceTimersByTime(60_000);
    expect(signIn.principal).toBeDefined();
    expect(lapses).toBe(1);
  });

  it("waits in steps for deadlines past what one timer can wait", () => {
    vi.useFakeTimers();
    let lapses = 0;
    const signIn = new SignIn(undefined, () => lapses++);
    const days = 40 * 24 * 3600 * 1000;
    signIn.set({ kind: "token-holder" }, Date.now() + days);
    vi.advanceTimersByTime(days - 1_000);
    expect(lapses).toBe(0);
    vi.advanceTimersByTime(2_000);
    expect(lapses).toBe(1);
  });
});
