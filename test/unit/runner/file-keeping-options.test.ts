import { describe, expect, it } from "vitest";
import { fileKeepingOptions } from "../../../services/runner/process/file-keeping-options.js";

describe("fileKeepingOptions", () => {
  it("finds the options that keep a file open from start, in node's own options and NODE_OPTIONS, spelled either way", () => {
    expect(fileKeepingOptions(["--enable-source-maps", "--prof", "--logfile=/tmp/v8.log"], "--max-old-space-size=512 --perf_basic_prof")).toEqual([
      "--prof",
      "--logfile=/tmp/v8.log",
      "--perf_basic_prof",
    ]);
  });

  it("lets every other option through, profiling at exit included", () => {
    expect(fileKeepingOptions(["--enable-source-maps", "--initial-old-space-size=128", "--cpu-prof", "--perf-prof-unwinding-info"], " --no-warnings ")).toEqual([]);
    expect(fileKeepingOptions([])).toEqual([]);
  });
});
