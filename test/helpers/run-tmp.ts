// vitest's global setup (vitest.config.ts): the test run's temporary folder, which the config made and gave to every
// process as TMPDIR, is removed once every file has run. HONE_KEEP_TEST_TMP=1 keeps it, to read what a test left.
import { rmSync } from "node:fs";

export default function setup(): () => void {
  return () => {
    const dir = process.env.HONE_TEST_TMP;
    if (!dir) return;
    if (process.env.HONE_KEEP_TEST_TMP) {
      console.log(`the test run's temporary files are kept in ${dir}`);
      return;
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      // A process the run started may still be writing there, or a test made a folder this user cannot enter.
      console.log(`the test run's temporary folder ${dir} could not be removed whole: ${(err as Error).message}`);
    }
  };
}
