import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentHash } from "../../harness/files.ts";
import { MemoryResponses, withCache } from "../../model/cache.ts";
import { type ModelSettings, type ResolvedModel, resolveModel } from "../../model/resolve.ts";
import { resolveTask } from "../../task/builtin.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import { EvaluatorPool } from "../../task/evaluator-pool.ts";
import { MemoryEvaluations, recordingEvaluator } from "../../task/recorded-evaluations.ts";
import { runQAJob } from "../qa-runner.ts";
import { shipRecords, writeRecordsFile } from "../recording.ts";
import { HarnessCache, runJob } from "../runner.ts";
import { type QAJobData, type QAJobReturn, type RolloutJobData, unpackDir } from "./job-data.ts";

/** Warm things a worker keeps between jobs: evaluator pools per task, models per settings. */
export class WorkerCaches {
  readonly tasks = new Map<string, { task: DiscoveryTask; pool: EvaluatorPool }>();
  readonly models = new Map<string, ResolvedModel>();
  constructor(readonly poolSize = 2) {}
  async close(): Promise<void> {
    for (const t of this.tasks.values()) t.pool.close();
    for (const m of this.models.values()) await m.close();
  }
}

async function modelFor(settings: QAJobData["executor"], caches: WorkerCaches): Promise<ResolvedModel> {
  const key = JSON.stringify(settings);
  let model = caches.models.get(key);
  if (!model) {
    model = await resolveModel(settings as ModelSettings);
    caches.models.set(key, model);
  }
  return model;
}

/** The worker's model with its responses recorded in memory, to travel back with the job's result. */
const recorded = (model: ResolvedModel, into: MemoryResponses) =>
  withCache(model.model, { mode: "off", read: [], write: [], record: into });

/** Runs one queued QA task on this machine; its trajectory and the model responses it got travel back with its result. */
export async function executeQAJobData(d: QAJobData, caches: WorkerCaches, who: string): Promise<QAJobReturn> {
  const model = await modelFor(d.executor, caches);
  const responses = new MemoryResponses();
  const scratch = mkdtempSync(join(tmpdir(), "hone-qa-job-"));
  try {
    const harnessDir = join(scratch, "harness");
    unpackDir(d.harnessFiles, harnessDir);
    const job = { id: d.jobId, harnessDir, benchmark: d.benchmark, task: d.task, seed: d.seed, repeat: d.repeat };
    const r = await runQAJob(job, recorded(model, responses), new HarnessCache());
    return { worker: who, result: r.result, events: r.events ?? [], records: shipRecords(responses) };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Runs one queued or submitted rollout on this machine into `outDir`: resolves the task locally and refuses a
 * content-hash mismatch, builds the executor from the job's settings (keys from this environment), runs it.
 */
export async function executeJobData(
  d: RolloutJobData,
  outDir: string,
  caches: WorkerCaches,
  who: string,
): Promise<string | undefined> {
  const key = `${d.task.ref}#${d.task.contentHash}`;
  let entry = caches.tasks.get(key);
  if (!entry) {
    const task = await resolveTask(d.task.ref, d.task.tasksDir);
    const hash = contentHash(task.dir);
    if (hash !== d.task.contentHash)
      return `${who}: task ${d.task.ref} here has content hash ${hash.slice(0, 12)}, the coordinator's is ${d.task.contentHash.slice(0, 12)}; refusing to measure a different task`;
    entry = { task, pool: await EvaluatorPool.start(task, { size: caches.poolSize }) };
    caches.tasks.set(key, entry);
  }
  const model = await modelFor(d.executor, caches);
  const scratch = mkdtempSync(join(tmpdir(), "hone-job-"));
  // Model responses and evaluations are recorded here, keyed as the coordinator would key them, and written beside
  // the rollout's results, so a run on workers replays exactly like a local one.
  const responses = new MemoryResponses();
  const evaluations = new MemoryEvaluations();
  try {
    const harnessDir = join(scratch, "harness");
    unpackDir(d.harnessFiles, harnessDir);
    const current = entry;
    const evaluate = recordingEvaluator((p) => current.pool.evaluate(p), d.task.contentHash, evaluations);
    const r = await runJob(
      {
        id: d.jobId,
        harnessDir,
        startProgram: d.startProgram,
        startEvaluation: d.startEvaluation,
        seed: d.seed,
        maxEvals: d.maxEvals,
        outDir,
      },
      {
        task: current.task,
        model: recorded(model, responses),
        evaluate,
        timeLimitSec: d.timeLimitSec,
        beforeFinish: (dir) => writeRecordsFile(dir, shipRecords(responses, evaluations)),
      },
    );
    return r.error;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
