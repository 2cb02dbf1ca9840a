import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

// One temporary folder for the whole run, TMPDIR of every test and of every process they start (hone, its pools,
// Python), removed at the end (test/helpers/run-tmp.ts): left in /tmp, a full run's folders came to ~0.5 GB.
const runTmp = mkdtempSync(join(tmpdir(), "hone-tests-"));
process.env.HONE_TEST_TMP = runTmp;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most tests wait on child processes (evaluators, the offline model, hone itself), not on this process's CPU:
    // two files at once take about 0.7 of the time of one at a time on a 2-core machine (840 s → 610 s).
    maxWorkers: 2,
    // After the summary: one line per tool whose absence skipped tests (test/helpers/requires.ts).
    reporters: ["default", "./test/helpers/skip-reporter.ts"],
    globalSetup: ["./test/helpers/run-tmp.ts"],
    // Tests get a cache of their own, never the user's.
    env: { TMPDIR: runTmp, HONE_CACHE_DIR: join(runTmp, "hone-test-cache") },
  },
});
