import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RolloutJobData } from "../../src/loop/distributed/job-data.ts";
import type { SlurmRunner } from "../../src/loop/distributed/slurm.ts";
import { remoteRunner } from "../../src/loop/remote-runner.ts";
import { resolveTask, withPhase } from "../../src/task/builtin.ts";
import type { DiscoveryTask } from "../../src/task/discovery-task.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { seedRollout } from "../helpers/rollout-job.ts";

// What a queued or submitted job names its task by is what a worker resolves on its own machine (`hone worker`'s
// resolveTask). It must give the worker the coordinator's task: the same config (OpenEvolve's circle_packing has
// config_phase_1.yaml and config_phase_2.yaml, whose prompts and settings differ, in one folder of one content hash),
// and for a built-in task the worker's own copy, wherever that machine's hone is installed.

const PHASED = join(ROOT, "test", "fixtures", "upstream", "openevolve", "circle_packing");

/** The task reference a job of the run carries, as the job's data file says it (the runner chosen as a run does). */
async function jobRef(task: DiscoveryTask, taskRef?: string, tasksDir?: string): Promise<RolloutJobData["task"]> {
  const runDir = join(tempDir(), "run");
  const runner = (await remoteRunner({
    slurm: {},
    runKey: "k",
    runDir,
    task,
    taskRef,
    tasksDir,
    executor: { model: "offline" },
    recording: { import: () => undefined },
  })) as SlurmRunner;
  const data = JSON.parse(runner.describe(seedRollout(task, "a", join(runDir, "rollouts", "a"))).json) as RolloutJobData;
  return data.task;
}

describe("the task a remote job names", () => {
  it("is the phase the run measures, not the folder's first", { timeout: 60_000 }, async () => {
    const ref = withPhase(PHASED, 2);
    const coordinators = await resolveTask(ref);
    for (const given of [ref, undefined]) {
      const named = await jobRef(coordinators, given);
      const workers = await resolveTask(named.ref, named.tasksDir);
      expect(workers.configPath).toBe(coordinators.configPath);
      expect(workers.id).toBe(coordinators.id);
      expect(workers.description).toBe(coordinators.description);
    }
    expect(readFileSync(coordinators.configPath as string, "utf8")).toMatch(/plateaued at 2\.377/);
  });

  it("is a built-in task's id, which a worker resolves in its own hone wherever that is installed", async () => {
    const task = await resolveTask("circle-packing");
    expect((await jobRef(task, "circle-packing")).ref).toBe("circle-packing");
    // `hone run` gives the task alone; a built-in given by its folder is still named by its id.
    expect((await jobRef(task)).ref).toBe("circle-packing");
    expect((await jobRef(await resolveTask(join(ROOT, "tasks", "circle-packing")))).ref).toBe("circle-packing");
  });

  it("is a folder's path for a task of the user's own (the same path on every machine: a shared filesystem)", async () => {
    const task = await resolveTask(PHASED);
    expect((await jobRef(task, PHASED)).ref).toBe(task.dir);
  });

  it("is a tasks.yaml entry's id with its tasks folder, so its overrides (a timeout, a phase) come with it", async () => {
    const root = tempDir();
    cpSync(PHASED, join(root, "cp"), { recursive: true });
    writeFileSync(join(root, "tasks.yaml"), "tasks:\n  - id: cp-two\n    path: cp\n    phase: 2\n    timeout: 77\n");
    const coordinators = await resolveTask("cp-two", root);
    expect(coordinators.timeoutSec).toBe(77);
    const named = await jobRef(coordinators, "cp-two", root);
    expect(named).toEqual({ ref: "cp-two", tasksDir: root, contentHash: expect.any(String) });
    const workers = await resolveTask(named.ref, named.tasksDir);
    expect([workers.timeoutSec, workers.configPath, workers.id]).toEqual([77, coordinators.configPath, "cp-two"]);
  });
});

describe("a tasks.yaml entry over a built-in folder", () => {
  // resolveTask finds an entry before a built-in id, so an entry may point at a built-in folder with overrides; the
  // job named it by the bare built-in id and a worker lost the overrides (found by review).
  it("is named as the entry, with its tasks folder", async () => {
    const root = tempDir();
    writeFileSync(
      join(root, "tasks.yaml"),
      `tasks:\n  - id: circle-packing\n    path: ${join(ROOT, "tasks", "circle-packing")}\n    timeout: 55\n`,
    );
    const coordinators = await resolveTask("circle-packing", root);
    expect(coordinators.timeoutSec).toBe(55);
    const named = await jobRef(coordinators, "circle-packing", root);
    expect([named.ref, named.tasksDir]).toEqual(["circle-packing", root]);
    expect((await resolveTask(named.ref, named.tasksDir)).timeoutSec).toBe(55);
  });
});
