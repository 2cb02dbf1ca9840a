import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RolloutJobData } from "../../src/loop/distributed/job-data.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// `hone run --task <a tasks.yaml id> --runner slurm` (or --queue) named the job's task by its folder alone, so a
// worker loaded the folder's own config and lost the entry's overrides (its phase, timeout). The job names the entry
// by its id and tasks folder, as `hone optimize`'s jobs do. An sbatch that keeps the job's data file and refuses the
// job (and an squeue with no job yet) shows what a worker would have been asked to run.

const PHASED = join(ROOT, "test", "fixtures", "upstream", "openevolve", "circle_packing");

describe("hone run on Slurm with a tasks.yaml entry", () => {
  it("names the entry with its tasks folder, so a worker gets its phase and timeout", { timeout: 120_000 }, async () => {
    const root = tempDir();
    const tasks = join(root, "tasks");
    cpSync(PHASED, join(tasks, "cp"), { recursive: true });
    writeFileSync(join(tasks, "tasks.yaml"), "tasks:\n  - id: cp-two\n    path: cp\n    phase: 2\n    timeout: 77\n");
    const bin = join(root, "bin");
    mkdirSync(bin);
    const kept = join(root, "job.json");
    writeFileSync(
      join(bin, "sbatch"),
      `#!/bin/sh\nfor a; do last="$a"; done\ncp "$(dirname "$last")/job.json" ${JSON.stringify(kept)}\necho "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2\nexit 1\n`,
    );
    // No job of this run in the queue yet (a real squeue with --noheader prints nothing then).
    writeFileSync(join(bin, "squeue"), "#!/bin/sh\nexit 0\n");
    for (const tool of ["sbatch", "squeue"]) chmodSync(join(bin, tool), 0o755);
    const out = join(root, "run");
    const args = ["run", "--task", "cp-two", "--tasks-dir", tasks, "--model", "offline", "--max-evals", "1"];
    const r = await hone([...args, "--runner", "slurm", "--out", out], {
      env: { PATH: `${bin}:${process.env.PATH}` },
      timeoutMs: 110_000,
    });
    expect(r.stderr).toContain("Invalid partition name specified");
    expect(r.code, r.stderr).toBe(7);
    expect(existsSync(kept), r.stderr).toBe(true);
    const job = JSON.parse(readFileSync(kept, "utf8")) as RolloutJobData;
    expect(job.task.ref).toBe("cp-two");
    expect(job.task.tasksDir).toBe(tasks);
  });
});
