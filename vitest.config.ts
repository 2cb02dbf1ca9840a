import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // After the summary: one line per tool whose absence skipped tests (test/helpers/requires.ts).
    reporters: ["default", "./test/helpers/skip-reporter.ts"],
    // Tests get a cache of their own, never the user's.
    env: { HONE_CACHE_DIR: join(tmpdir(), `hone-test-cache-${process.pid}`) },
  },
});
