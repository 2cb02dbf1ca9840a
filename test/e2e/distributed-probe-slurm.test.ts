import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SlurmRunner } from "../../src/loop/distributed/slurm.ts";
import type { RolloutJob } from "../../src/loop/runner.ts";
import { resolveTask } from "../../src/task/builtin.ts";
import type { DiscoveryTask } from "../../src/task/discovery-task.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { missing, requireTool } from "../helpers/requires.ts";
import { type SlurmCluster, startSlurm } from "../helpers/slurm-cluster.ts";

// A Slurm job gets only the variables its --export names. A rollout on an endpoint reads its API key from the job's
// environment (the variable --api-key-env names, OPENAI_API_KEY by default), as a local rollout reads it from the
// run's: the job must carry that variable, by name (its value never written into the script), or every rollout of a
// run on Slurm fails where the same run on the local pool works.

const KEY = "HONE_PROBE_API_KEY";
const SECRET = "sk-probe-not-a-real-key-1234567890";
const dir = tempDir("hone-slurm-probe-");
let task: DiscoveryTask;
let cluster: SlurmCluster = { env: {}, unavailable: "not started", stop: () => {} };

beforeAll(async () => {
  task = await resolveTask("circle-packing");
  process.env[KEY] = SECRET;
}, 60_000);

afterAll(() => {
  delete process.env[KEY];
  cluster.stop();
}, 30_000);

const job = (id: string, runDir: string): RolloutJob => ({
  id,
  harnessDir: join(ROOT, "harnesses", "initial"),
  startProgram: "x = 1\n",
  startEvaluation: { valid: true, score: 0, metrics: {}, artifacts: {}, seconds: 0 },
  seed: 0,
  maxEvals: 1,
  outDir: join(runDir, "rollouts", id),
});

const exported = (script: string) => /^#SBATCH --export=(.*)$/m.exec(script)?.[1]?.split(",") ?? [];

describe("a rollout's Slurm job and the executor's API key", () => {
  it("carries the variable the executor reads its key from, by name only", () => {
    const runDir = join(dir, "names");
    const runner = (executor: { model: string; baseUrl?: string; apiKeyEnv?: string }) =>
      new SlurmRunner({ runDir, task, taskRef: task.dir, executor });
    const named = runner({ model: "m", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: KEY }).describe(job("r01-k0", runDir));
    expect(exported(named.script)).toContain(KEY);
    expect(named.script).not.toContain(SECRET);
    expect(named.json).not.toContain(SECRET);
    // No --api-key-env: the endpoint's key is read from OPENAI_API_KEY, which then travels when the shell has it.
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = SECRET;
    try {
      const byDefault = runner({ model: "m", baseUrl: "http://127.0.0.1:9/v1" }).describe(job("r01-k0", runDir));
      expect(exported(byDefault.script)).toContain("OPENAI_API_KEY");
      // The offline model calls no endpoint and takes no key: none travels.
      const offline = runner({ model: "offline" }).describe(job("r01-k0", runDir));
      expect(exported(offline.script)).not.toContain("OPENAI_API_KEY");
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  it("reaches the job's environment on a real Slurm", { timeout: 120_000 }, async (ctx) => {
    if (missing("slurm")) return requireTool(ctx, "slurm");
    cluster = await startSlurm(join(dir, "cluster"));
    requireTool(ctx, "slurm", cluster.unavailable ?? undefined);
    const saved = process.env.SLURM_CONF;
    Object.assign(process.env, cluster.env);
    try {
      const runDir = join(dir, "run");
      const seen = join(dir, "seen-in-job.txt");
      // The job writes down what its environment holds, then stops before the rollout (there is no endpoint).
      const template = join(dir, "job.sh");
      writeFileSync(
        template,
        `#!/bin/bash\n#SBATCH --job-name={{name}}\n#SBATCH --output={{output}}\n{{directives}}\nprintf '%s' "\${${KEY}:-missing}" > '${seen}'\nexit 0\n{{command}}\n`,
      );
      const runner = new SlurmRunner({
        runDir,
        task,
        taskRef: task.dir,
        executor: { model: "m", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: KEY },
        template,
        timeMinutes: 2,
        pollMs: 200,
        say: () => undefined,
      });
      const results = [];
      for await (const r of runner.run([job("r01-k0", runDir)])) results.push(r);
      expect(results).toHaveLength(1);
      expect(existsSync(seen)).toBe(true);
      expect(readFileSync(seen, "utf8")).toBe(SECRET);
    } finally {
      if (saved === undefined) delete process.env.SLURM_CONF;
      else process.env.SLURM_CONF = saved;
    }
  });
});
