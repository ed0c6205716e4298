import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    reporters: ["default", "./test/summary-reporter.ts"],
    // node-pty's native callbacks abort the process when used from worker threads: tests run in forked processes.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
  },
});
