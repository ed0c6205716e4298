import { describe, expect, it } from "vitest";
import { ShellMarkFilter } from "../../../gateway/runners/shell-mark-filter.js";

const raw =
  "\x1b]133;A\x07$ \x1b]133;B\x07ls\r\n\x1b]133;C\x07a b\r\n\x1b]133;D;0\x07\x1b]7;file://h/tmp\x1b\\\x1b]633;P;Cwd=/tmp\x07" +
  "\x1b]0;title stays\x07\x1b[31mred\x1b[0m\x1b]133;A\x07$ ";
const clean = "$ ls\r\na b\r\n\x1b]0;title stays\x07\x1b[31mred\x1b[0m$ ";

describe("ShellMarkFilter", () => {
  it("removes OSC 133, 633 and 7 and keeps every other sequence", () => {
    const filter = new ShellMarkFilter();
    expect(filter.filter(raw) + filter.flush()).toBe(clean);
  });

  it("gives the same text when fed one character at a time", () => {
    const filter = new ShellMarkFilter();
    let out = "";
    for (const char of raw) out += filter.filter(char);
    expect(out + filter.flush()).toBe(clean);
  });

  it("holds back nothing that cannot be a shell mark", () => {
    const filter = new ShellMarkFilter();
    expect(filter.filter("plain \x1b]2;a split tit")).toBe("plain \x1b]2;a split tit");
    expect(filter.filter("le\x07 done")).toBe("le\x07 done");
    expect(filter.filter("ends with \x1b")).toBe("ends with ");
    expect(filter.filter("[1m")).toBe("\x1b[1m");
  });

  it("lets an unfinished mark through at the end rather than lose the bytes", () => {
    const filter = new ShellMarkFilter();
    expect(filter.filter("text \x1b]133;D;")).toBe("text ");
    expect(filter.flush()).toBe("\x1b]133;D;");
  });
});
