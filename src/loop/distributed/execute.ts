import { contentHash } from "../../harness/files.ts";
import { MemoryResponses, withCache } from "../../model/cache.ts";
import { type ModelSettings, type ResolvedModel, resolveModel } from "../../model/resolve.ts";
import { resolveTask } from "../../task/builtin.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import { EvaluatorPool } from "../../task/evaluator-pool.ts";
import { checkTaskNeedsAsync } from "../../task/needs.ts";
import { MemoryEvaluations, recordingEvaluator } from "../../task/recorded-evaluations.ts";
import { runQAJob } from "../qa-runner.ts";
import { type ShippedRecords, shipRecords } from "../recording.ts";
import { runJobInMemory } from "../runner.ts";
import type { QAJobData, QAJobReturn, RolloutJobData } from "./job-data.ts";
import { WorkerFiles } from "./worker-files.ts";

/** A task's copy on this worker with its warm pool, or why the worker refuses the coordinator's task. */
type WarmTask = { task: DiscoveryTask; pool: EvaluatorPool } | { refused: string };

/**
 * Warm things a worker keeps between jobs, as the local pool keeps them for a run: an evaluator pool per task, a
 * model per settings, harness packages by content (unpacked, loaded and gated once), its own folder. Jobs that
 * arrive together share one of each (the promise is kept, not the value), so a worker never starts a second pool
 * or model that nothing would close.
 */
export class WorkerCaches {
  private readonly tasks = new Map<string, Promise<WarmTask>>();
  private readonly models = new Map<string, Promise<ResolvedModel>>();
  readonly files = new WorkerFiles();
  constructor(readonly poolSize = 2) {}

  /** One value per key however many jobs ask at once; a start that failed is forgotten, so a later job tries again. */
  private static shared<T>(map: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
    let value = map.get(key);
    if (!value) {
      value = make();
      map.set(key, value);
      value.catch(() => map.delete(key));
    }
    return value;
  }

  task(t: RolloutJobData["task"], who: string): Promise<WarmTask> {
    return WorkerCaches.shared(this.tasks, `${t.ref}#${t.contentHash}`, async () => {
      // Its needs checked beside (a worker's timers renew the locks of the jobs it holds).
      const task = await resolveTask(t.ref, t.tasksDir, { check: false });
      await checkTaskNeedsAsync(task);
      const hash = contentHash(task.dir);
      if (hash !== t.contentHash)
        return {
          refused: `${who}: task ${t.ref} here has content hash ${hash.slice(0, 12)}, the coordinator's is ${t.contentHash.slice(0, 12)}; refusing to measure a different task`,
        };
      const onNotice = (text: string) => process.stderr.write(`${who}: ${text}\n`);
      return { task, pool: await EvaluatorPool.start(task, { size: this.poolSize, onNotice }) };
    });
  }

  model(settings: QAJobData["executor"]): Promise<ResolvedModel> {
    return WorkerCaches.shared(this.models, JSON.stringify(settings), () => resolveModel(settings as ModelSettings));
  }

  async close(): Promise<void> {
    for (const t of this.tasks.values()) {
      const warm = await t.catch(() => undefined);
      if (warm && "pool" in warm) warm.pool.close();
    }
    for (const m of this.models.values()) await (await m.catch(() => undefined))?.close();
    await this.files.close();
  }
}

/** The worker's model with its responses recorded in memory, to travel back with the job's result. */
const recorded = (model: ResolvedModel, into: MemoryResponses) =>
  withCache(model.model, { mode: "off", read: [], write: [], record: into });

/** Runs one queued QA task on this machine; its trajectory and the model responses it got travel back with its result. */
export async function executeQAJobData(d: QAJobData, caches: WorkerCaches, who: string): Promise<QAJobReturn> {
  const model = await caches.model(d.executor);
  const responses = new MemoryResponses();
  return caches.files.withPackage(d.harnessFiles, async (harnessDir) => {
    const job = { id: d.jobId, harnessDir, benchmark: d.benchmark, task: d.task, seed: d.seed, repeat: d.repeat };
    const r = await runQAJob(job, recorded(model, responses), caches.files.harnesses);
    return { worker: who, result: r.result, events: r.events ?? [], records: shipRecords(responses) };
  });
}

/**
 * Runs one queued or submitted rollout on this machine: resolves the task locally and refuses a content-hash
 * mismatch, builds the executor from the job's settings (keys from this environment), runs it. Its files come back
 * in memory, as they travel (the folder a local rollout would leave, by path), and its records beside them.
 */
export async function executeJobData(
  d: RolloutJobData,
  caches: WorkerCaches,
  who: string,
): Promise<{ error?: string; files: Record<string, string>; records?: ShippedRecords }> {
  const warm = await caches.task(d.task, who);
  if ("refused" in warm) return { error: warm.refused, files: {} };
  const model = await caches.model(d.executor);
  // Model responses and evaluations are recorded here, keyed as the coordinator would key them, and shipped beside
  // the rollout's results, so a run on workers replays exactly like a local one.
  const responses = new MemoryResponses();
  const evaluations = new MemoryEvaluations();
  return caches.files.withPackage(d.harnessFiles, async (harnessDir) => {
    const evaluate = recordingEvaluator((p) => warm.pool.evaluate(p), d.task.contentHash, evaluations);
    const r = await runJobInMemory(
      {
        id: d.jobId,
        harnessDir,
        startProgram: d.startProgram,
        startEvaluation: d.startEvaluation,
        seed: d.seed,
        maxEvals: d.maxEvals,
      },
      { task: warm.task, model: recorded(model, responses), evaluate, timeLimitSec: d.timeLimitSec },
      caches.files.harnesses,
    );
    if (r.error) return { error: r.error, files: {} };
    return { files: r.files, records: shipRecords(responses, evaluations) };
  });
}
