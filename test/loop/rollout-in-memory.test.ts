import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packDir } from "../../src/loop/distributed/job-data.ts";
import { DEFAULT_HARNESS } from "../../src/loop/run.ts";
import { HarnessCache, type RolloutJob, runJob, runJobInMemory } from "../../src/loop/runner.ts";
import { type ResolvedModel, resolveModel } from "../../src/model/resolve.ts";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { CIRCLE_PACKING, tempDir } from "../helpers/fixtures.ts";

// A worker keeps a rollout's files in memory and ships them (runJobInMemory); the local pool writes them into the
// run (runJob). The two must leave the same rollout: the same files, with the same contents but for wall times.

let task: DiscoveryTask;
let pool: EvaluatorPool;
let model: ResolvedModel;

beforeAll(async () => {
  task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
  pool = await EvaluatorPool.start(task, { size: 1 });
  model = await resolveModel({ model: "offline" });
});

afterAll(async () => {
  pool?.close();
  await model?.close();
});

/** A file's text with what differs between two runs of the same rollout (wall times) taken out. */
function steady(name: string, text: string): unknown {
  const drop = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(drop);
    if (v === null || typeof v !== "object") return v;
    const kept = Object.entries(v).filter(([k]) => !["t", "seconds", "latency_ms", "ms"].includes(k));
    return Object.fromEntries(kept.map(([k, x]) => [k, drop(x)]));
  };
  if (name.endsWith(".jsonl"))
    return text
      .trimEnd()
      .split("\n")
      .map((l) => drop(JSON.parse(l)));
  return name.endsWith(".json") ? drop(JSON.parse(text)) : text;
}

const job = (outDir: string): RolloutJob => ({
  id: "job-1",
  harnessDir: DEFAULT_HARNESS,
  startProgram: task.seedProgram,
  startEvaluation: { valid: true, score: 0.9597642169962064, metrics: {}, artifacts: {}, seconds: 0 },
  seed: 3,
  maxEvals: 2,
  outDir,
});

describe("a rollout kept in memory", () => {
  it("has the files, by path and content, that the same rollout leaves in its folder", async () => {
    const options = { task, model: model.model, evaluate: (p: string) => pool.evaluate(p) };
    const outDir = join(tempDir(), "rollout");
    const onDisk = await runJob(job(outDir), options, new HarnessCache());
    const inMemory = await runJobInMemory(job(""), options, new HarnessCache());
    expect(onDisk.error).toBeUndefined();
    expect(inMemory.error).toBeUndefined();
    const disk = packDir(outDir);
    expect(Object.keys(inMemory.files).sort()).toEqual(Object.keys(disk).sort());
    // Two evaluations were made, each program kept, and the best one.
    expect(Object.keys(disk)).toEqual(expect.arrayContaining(["programs/0001.py", "programs/0002.py", "best_program.py"]));
    for (const [name, text] of Object.entries(disk))
      expect(steady(name, inMemory.files[name] as string), name).toEqual(steady(name, text));
    expect(inMemory.outcome?.bestScore).toBe(onDisk.outcome?.bestScore);
  });

  it("leaves nothing behind in memory or on disk when the rollout fails, and says why", async () => {
    const broken = { task, model: model.model, evaluate: () => Promise.reject(new Error("the evaluator went away")) };
    const r = await runJobInMemory(job(""), broken, new HarnessCache());
    expect(r.error).toMatch(/the evaluator went away/);
    expect(r.files).toEqual({});
    // On disk the failed rollout never appears under its name.
    const outDir = join(tempDir(), "failed");
    const d = await runJob(job(outDir), broken, new HarnessCache());
    expect(d.error).toMatch(/the evaluator went away/);
    expect(existsSync(outDir)).toBe(false);
    expect(readdirSync(join(outDir, "..")).filter((f) => !f.endsWith(".partial"))).toEqual([]);
    expect(readFileSync(join(`${outDir}.partial`, "trajectory.jsonl"), "utf8")).toContain("rollout_start");
  });
});
