// vitest's global setup (vitest.config.ts): the test run's temporary folder, which the config made and gave to every
// process as TMPDIR, is removed once every file has run. HONE_KEEP_TEST_TMP=1 keeps it, to read what a test left.
// Workers keep their folders in /dev/shm where they can, outside TMPDIR: those of workers the tests killed are
// removed too, as the next worker started on the machine would remove them.
import { rmSync } from "node:fs";
import { MEMORY_ROOT, ownBase, pidNamespace, removeStalePools } from "../../src/task/pool-dir.ts";

function removeDeadWorkersFolders(): void {
  const base = ownBase(MEMORY_ROOT); // this user's own folder there, never a link
  if (base) removeStalePools(base, "worker", pidNamespace());
}

export default function setup(): () => void {
  return () => {
    removeDeadWorkersFolders();
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
