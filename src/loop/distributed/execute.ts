import { MemoryResponses, withCache } from "../../model/cache.ts";
import { DEFAULT_API_KEY_ENV } from "../../model/openai-compatible.ts";
import { type ModelSettings, type ResolvedModel, resolveModel } from "../../model/resolve.ts";
import type { RolloutFiles } from "../../store/rollout-files.ts";
import { resolveTask } from "../../task/builtin.ts";
import { taskContentHash } from "../../task/content-hash.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import { EvaluatorPool } from "../../task/evaluator-pool.ts";
import { type EvaluatorRuntime, evaluatorRuntime, sandboxed } from "../../task/evaluator-runtime.ts";
import { checkTaskNeedsAsync } from "../../task/needs.ts";
import { MemoryEvaluations, recordingEvaluator } from "../../task/recorded-evaluations.ts";
import { runQAJob } from "../qa-runner.ts";
import { RECORDS_FILE, recordsJson, type ShippedRecords, shipRecords, withRecordsFile } from "../recording.ts";
import { EVALUATOR_FILE } from "../rollout-records.ts";
import { type LocalRunnerOptions, runJob, runJobInMemory } from "../runner.ts";
import {
  currentHoneBuild,
  type HoneBuild,
  honeBuildRefusal,
  jobHarness,
  type QAJobData,
  type QAJobReturn,
  type RolloutJobData,
} from "./job-data.ts";
import { type FetchPackage, WorkerFiles } from "./worker-files.ts";

/**
 * A task's copy on this worker with its warm pool and the hone build that pool loaded, or why the worker refuses the
 * coordinator's task.
 */
type WarmTask = { task: DiscoveryTask; pool: EvaluatorPool; build: HoneBuild } | { refused: string };

/**
 * The evaluator's runtime on this machine (the task's Python and numpy here, and whether bubblewrap seals it), as a
 * run here would record it in its measurement identity. A worker or Slurm node reports it with each rollout
 * (EVALUATOR_FILE among its files) and never refuses a job for it: the rollout's identity names it where it differs
 * from the coordinator's. Asked once per interpreter in a process (evaluator-runtime.ts, which also keeps it on disk).
 */
export const runtimeHere = (task: DiscoveryTask): Promise<EvaluatorRuntime | undefined> =>
  evaluatorRuntime(task).then((r) => sandboxed(r, task));

/**
 * Warm things a worker keeps between jobs, as the local pool keeps them for a run: an evaluator pool per task, a
 * model per settings, harness packages by content (fetched, unpacked, loaded and gated once), its own folder. Jobs
 * that arrive together share one of each (the promise is kept, not the value), so a worker never starts a second
 * pool or model that nothing would close. `fetchPackage` gets a package a job names by digest alone (a queue's).
 */
export class WorkerCaches {
  private readonly tasks = new Map<string, Promise<WarmTask>>();
  private readonly models = new Map<string, Promise<ResolvedModel>>();
  readonly files = new WorkerFiles();
  /**
   * `keyEnvs`: the environment variables a job may name for its executor's API key (a `hone worker`'s
   * `--api-key-env`); undefined takes the job's word (a Slurm job, written by its own coordinator).
   */
  constructor(
    readonly poolSize = 2,
    private readonly fetchPackage?: FetchPackage,
    private readonly keyEnvs?: readonly string[],
  ) {}

  /** Runs `use` with the job's harness package unpacked on this machine. */
  withPackage<T>(d: RolloutJobData | QAJobData, use: (dir: string) => Promise<T>): Promise<T> {
    return this.files.withPackage(jobHarness(d), use, this.fetchPackage);
  }

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
    const key = `${t.ref}#${t.contentHash}`;
    return WorkerCaches.shared(this.tasks, key, async () => {
      // Its needs checked beside (a worker's timers renew the locks of the jobs it holds).
      const task = await resolveTask(t.ref, t.tasksDir, { check: false });
      await checkTaskNeedsAsync(task);
      const hash = taskContentHash(task);
      if (hash !== t.contentHash) {
        // Said of the folder as it is now: the next job looks again (a copy brought up to date is then measured).
        this.tasks.delete(key);
        return {
          refused: `${who}: task ${t.ref} here has content hash ${hash.slice(0, 12)}, the coordinator's is ${t.contentHash.slice(0, 12)}; refusing to measure a different task`,
        };
      }
      const onNotice = (text: string) => process.stderr.write(`${who}: ${text}\n`);
      // The build as the pool's processes load it: they keep it however hone's files change after.
      const build = currentHoneBuild();
      return { task, pool: await EvaluatorPool.start(task, { size: this.poolSize, onNotice }), build };
    });
  }

  model(settings: QAJobData["executor"]): Promise<ResolvedModel> {
    const refused = keyRefusal(settings, this.keyEnvs);
    if (refused) return Promise.reject(new Error(refused));
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

/**
 * Why a job may not have its executor's key from this worker: a job names the variable its key is read from and the
 * endpoint it is sent to, so a worker that read any variable a job names would send whatever its environment holds
 * (another service's secret) to wherever the job says. Only the variables the worker was started with are read.
 */
export function keyRefusal(settings: QAJobData["executor"], keyEnvs: readonly string[] | undefined): string | undefined {
  const name = settings.apiKeyEnv ?? DEFAULT_API_KEY_ENV;
  if (!settings.baseUrl || !keyEnvs || keyEnvs.includes(name)) return undefined;
  return `the job asks for its API key from $${name}, which this worker does not give (it gives ${keyEnvs.map((k) => `$${k}`).join(", ")}); start the worker with --api-key-env ${name} if that variable is meant for the executor`;
}

/** The worker's model with its responses recorded in memory, to travel back with the job's result. */
const recorded = (model: ResolvedModel, into: MemoryResponses) =>
  withCache(model.model, { mode: "off", read: [], write: [], record: into });

/** Runs one queued QA task on this machine; its trajectory and the model responses it got travel back with its result. */
export async function executeQAJobData(d: QAJobData, caches: WorkerCaches, who: string): Promise<QAJobReturn> {
  // A QA task's tools start their processes now, from hone's files as they are now.
  const refused = honeBuildRefusal(d.hone, currentHoneBuild(), who);
  if (refused) throw new Error(refused);
  const model = await caches.model(d.executor);
  const responses = new MemoryResponses();
  return caches.withPackage(d, async (harnessDir) => {
    const job = { id: d.jobId, harnessDir, benchmark: d.benchmark, task: d.task, seed: d.seed, repeat: d.repeat };
    const r = await runQAJob(job, recorded(model, responses), caches.files.harnesses);
    return { worker: who, result: r.result, events: r.events ?? [], records: shipRecords(responses) };
  });
}

/** A rollout job set up on this machine: what its runner needs, with the records it makes kept here. */
interface SetUp {
  options: Omit<LocalRunnerOptions, "concurrency">;
  /** The model responses and evaluations the job got, keyed as the coordinator keys its own records. */
  records: () => ShippedRecords;
  /** The evaluator's runtime here, asked while the rollout runs, to travel back with it (EVALUATOR_FILE). */
  runtime: Promise<EvaluatorRuntime | undefined>;
}

/**
 * Resolves the job's task locally and refuses a content-hash mismatch, builds the executor from the job's settings
 * (keys from this environment). Model responses and evaluations are recorded here and travel back with the rollout,
 * so a run on workers replays exactly like a local one.
 */
async function setUp(d: RolloutJobData, caches: WorkerCaches, who: string): Promise<SetUp | { refused: string }> {
  const warm = await caches.task(d.task, who);
  if ("refused" in warm) return warm;
  const refused = honeBuildRefusal(d.hone, warm.build, who);
  if (refused) return { refused };
  const model = await caches.model(d.executor);
  const responses = new MemoryResponses();
  const evaluations = new MemoryEvaluations();
  const evaluate = recordingEvaluator((p) => warm.pool.evaluate(p), d.task.contentHash, evaluations);
  return {
    options: { task: warm.task, model: recorded(model, responses), evaluate, timeLimitSec: d.timeLimitSec },
    records: () => shipRecords(responses, evaluations),
    runtime: runtimeHere(warm.task),
  };
}

/** The rollout's files with the evaluator's runtime it was measured under here, where this machine could tell it. */
const withRuntime = (files: Record<string, string>, runtime: EvaluatorRuntime | undefined): Record<string, string> =>
  runtime ? { ...files, [EVALUATOR_FILE]: JSON.stringify(runtime) } : files;

const jobOf = (d: RolloutJobData, harnessDir: string) => ({
  id: d.jobId,
  harnessDir,
  startProgram: d.startProgram,
  startEvaluation: d.startEvaluation,
  seed: d.seed,
  maxEvals: d.maxEvals,
});

/**
 * Runs one queued rollout on this machine (a `hone worker`'s job). Its files come back in memory, as they travel
 * (the folder a local rollout would leave, by path), and its records beside them; for a coordinator that does not
 * take records apart (`recordsBeside` unset: an older hone), they come back as records.json among the files.
 */
export async function executeJobData(
  d: RolloutJobData,
  caches: WorkerCaches,
  who: string,
): Promise<{ error?: string; files: Record<string, string>; records?: ShippedRecords }> {
  const ready = await setUp(d, caches, who);
  if ("refused" in ready) return { error: ready.refused, files: {} };
  return caches.withPackage(d, async (harnessDir) => {
    const r = await runJobInMemory(jobOf(d, harnessDir), ready.options, caches.files.harnesses);
    if (r.error) return { error: r.error, files: {} };
    const records = ready.records();
    const files = withRuntime(r.files, await ready.runtime);
    return d.recordsBeside ? { files, records } : { files: withRecordsFile(files, records) };
  });
}

/**
 * Runs one submitted rollout on this machine into `outDir` (a Slurm job, on the shared filesystem): the trajectory is
 * appended as it happens, so a job that fails or is killed leaves it in `<outDir>.partial`; a finished one appears
 * whole under `outDir`, its records beside its files as records.json (its only way back to the coordinator).
 */
export async function executeJobDataInto(
  d: RolloutJobData,
  outDir: string,
  caches: WorkerCaches,
  who: string,
): Promise<string | undefined> {
  const ready = await setUp(d, caches, who);
  if ("refused" in ready) return ready.refused;
  return caches.withPackage(d, async (harnessDir) => {
    const runtime = await ready.runtime;
    const finish = (files: RolloutFiles) => {
      files.write(RECORDS_FILE, recordsJson(ready.records()));
      if (runtime) files.write(EVALUATOR_FILE, JSON.stringify(runtime));
    };
    const r = await runJob({ ...jobOf(d, harnessDir), outDir }, ready.options, caches.files.harnesses, finish);
    return r.error;
  });
}
