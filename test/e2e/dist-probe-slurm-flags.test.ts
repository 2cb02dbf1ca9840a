import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

// `--slurm-partition gpu` without `--runner slurm` was dropped without a word: every rollout ran on the machine hone
// was started on (on a cluster, its login node), and a run configured for Slurm in hone.yaml lost a --slurm-time
// given on the command line. A Slurm flag without --runner slurm is a usage error, before anything is written.

describe("a --slurm-* flag without --runner slurm", () => {
  it("is refused by hone run and hone optimize, naming the flags, and nothing runs", { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const run = await hone([
      "run",
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--max-evals",
      "1",
      "--slurm-partition",
      "gpu",
      "--out",
      join(dir, "run"),
    ]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("--slurm-partition is for Slurm jobs: add --runner slurm");
    expect(existsSync(join(dir, "run"))).toBe(false);
    const optimize = await hone([
      "optimize",
      "--task",
      "circle-packing",
      "--executor",
      "offline",
      "--proposer",
      "offline",
      "--rounds",
      "1",
      "--runner",
      "local",
      "--slurm-gres",
      "gpu:1",
      "--slurm-time",
      "30",
      "--out",
      join(dir, "opt"),
    ]);
    expect(optimize.code, optimize.stderr).toBe(2);
    expect(optimize.stderr).toContain("--slurm-gres, --slurm-time are for Slurm jobs: add --runner slurm");
    expect(existsSync(join(dir, "opt"))).toBe(false);
  });
});
