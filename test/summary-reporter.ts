import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends every run with one line `N passed, N failed`, the line CI reads. A test file that could not
 * even load, and an unhandled error, each count as a failure, so neither can pass unnoticed.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of testModules) {
      let moduleFailures = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") moduleFailures++;
        else skipped++;
      }
      if (moduleFailures === 0 && module.state() === "failed") moduleFailures = 1;
      failed += moduleFailures;
    }
    if (skipped > 0) process.stdout.write(`${skipped} skipped\n`);
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
  }
}
