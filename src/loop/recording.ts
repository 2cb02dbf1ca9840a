// A run's records for replay, for every run kind: its model calls and evaluations in its own hone.db, the shared
// request cache, and (for `hone replay`) the recorded run it reproduces.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import {
  type CachedModel,
  type CacheMode,
  defaultCachePath,
  type MemoryResponses,
  type ResponseRecords,
  ResponseStore,
  responseFault,
  withCache,
} from "../model/cache.ts";
import { ModelError } from "../model/errors.ts";
import { OpenAICompatibleModel } from "../model/openai-compatible.ts";
import { type ModelSettings, type ResolvedModel, resolveModel } from "../model/resolve.ts";
import type { ChatResponse } from "../model/types.ts";
import { withoutPassword } from "../secret-url.ts";
import { type Db, openDb, openRecordDb, runRow } from "../store/db.ts";
import { type RecordedRow, recordedEvaluators, recordedRows, recordedTasks } from "../store/recorded-rows.ts";
import { builtinTaskIds } from "../task/builtin.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { Evaluation } from "../task/evaluation.ts";
import { type EvaluatorRuntime, evaluatorRuntime, sandboxed } from "../task/evaluator-runtime.ts";
import {
  type Evaluate,
  EvaluationRecords,
  type EvaluationSink,
  type MemoryEvaluations,
  RecordedEvaluations,
  recordingEvaluator,
  type ScopedEvaluate,
} from "../task/recorded-evaluations.ts";

export interface RecordingSettings {
  /** Request cache: off, read-write (default) or replay; `dir` holds the shared cache (default ~/.cache/hone). */
  cache?: { mode: CacheMode; dir?: string };
  /** For `hone replay`: the recorded run whose model calls and evaluations this run reproduces. */
  replayOf?: string;
}

/** Records made elsewhere (a worker, a Slurm job) and carried back with the job's result. */
export interface ShippedRecords {
  responses: { key: string; model: string; response: ChatResponse }[];
  evaluations: { key: string; result: Evaluation }[];
}

export const RECORDS_FILE = "records.json";
const MAX_RECORDS_BYTES = 256 * 1024 * 1024;

export function shipRecords(responses: MemoryResponses, evaluations?: MemoryEvaluations): ShippedRecords {
  return { responses: responses.entries(), evaluations: evaluations?.entries() ?? [] };
}

/**
 * A job's files with its records beside them as RECORDS_FILE, where the coordinator imports them from when nothing
 * else carries them back (a Slurm job writes its folder on a shared filesystem).
 */
export function withRecordsFile(files: Record<string, string>, records: ShippedRecords | undefined): Record<string, string> {
  return records ? { ...files, [RECORDS_FILE]: recordsJson(records) } : files;
}

/** A job's records as RECORDS_FILE holds them. */
export const recordsJson = (records: ShippedRecords): string => JSON.stringify(records);

const HEX64 = /^[0-9a-f]{64}$/;
/** Records one job may ship: far above what a rollout makes (a model call per agent step, an evaluation per budget). */
const MAX_SHIPPED_RECORDS = 100_000;

/**
 * Reads records a job made elsewhere, refusing anything that is not the expected shape (keys checked, each record's
 * fields typed); a job that ships more than MAX_SHIPPED_RECORDS has all of them refused.
 */
export function readRecords(value: unknown): ShippedRecords {
  const v = value as Partial<ShippedRecords> | null;
  const responses = Array.isArray(v?.responses) ? v.responses : [];
  const evaluations = Array.isArray(v?.evaluations) ? v.evaluations : [];
  if (responses.length + evaluations.length > MAX_SHIPPED_RECORDS) return { responses: [], evaluations: [] };
  return {
    responses: responses.filter(
      (r) =>
        typeof r?.key === "string" &&
        HEX64.test(r.key) &&
        typeof r.model === "string" &&
        Array.isArray(r.response?.message?.tool_calls),
    ),
    evaluations: evaluations.filter(
      (e) => typeof e?.key === "string" && HEX64.test(e.key) && typeof e.result?.valid === "boolean",
    ),
  };
}

export function readRecordsFile(dir: string): ShippedRecords | undefined {
  const path = join(dir, RECORDS_FILE);
  if (!existsSync(path) || statSync(path).size > MAX_RECORDS_BYTES) return undefined;
  try {
    return readRecords(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    return undefined;
  }
}

/**
 * Whether a rollout's error is one of a replay that cannot go on faithfully: a request or evaluation the recorded run
 * never made, or a record of it that is damaged. Such a rollout is the replay's failure, never a failed measurement.
 */
export const isReplayFault = (error: string): boolean =>
  // Read at its head (where hone's own message is; a folder's path is at most 4096 bytes), so a long error text
  // that repeats the words costs a bounded scan.
  /replay: (this (request|evaluation) was never recorded|the recorded (response|evaluation) \S+ in .* is damaged)/s.test(
    error.slice(0, 8192),
  );

/** A model served only from records: no endpoint is contacted; an unrecorded request is an error. */
function replayClient(m: Partial<ModelSettings> & { model: string }): OpenAICompatibleModel {
  return new OpenAICompatibleModel(
    {
      baseUrl: "http://replay.invalid/v1",
      model: m.model,
      dialect: m.model === "offline" ? "vllm" : m.dialect,
      keepSampling: m.keepSampling,
      // A streamed run replays streamed: the records hold what a stream assembled.
      stream: m.stream,
    },
    {},
  );
}

/**
 * A recorded run's responses (`hone replay`), read only. A record that is not a response, as the run would have
 * written it, is an error naming the record and the file: never served, never removed, never taken for a miss.
 */
class RecordedResponses implements ResponseRecords {
  private readonly read: (key: string) => RecordedRow;
  constructor(
    db: Db,
    private readonly path: string,
  ) {
    this.read = recordedRows(db, "responses", "response", responseFault);
  }
  get(key: string): ChatResponse | undefined {
    const r = this.read(key);
    // A replay failure as an unrecorded request is: the agent loop stops the run on it, never takes it for the
    // rollout's model error (which would replay on into other numbers).
    if (r && "fault" in r)
      throw new ModelError(
        "replay_miss",
        `replay: the recorded response ${key.slice(0, 16)}… in ${this.path} is damaged: ${r.fault}`,
        { url: "replay" },
      );
    return r?.value as ChatResponse | undefined;
  }
  put(): void {
    throw new Error("a recorded run's responses are read only");
  }
}

/** The endpoint as the shared cache keys it: its URL without a password, or none for the built-in offline model. */
function cacheEndpoint(m: Partial<ModelSettings> & { model: string }): string | undefined {
  if (!m.baseUrl) return undefined; // the offline model (any other model needs a base URL)
  return withoutPassword(m.baseUrl).replace(/\/+$/, "");
}

/** The task a recorded run was given (a built-in id or a folder), as its settings hold it; undefined if unreadable. */
function recordedTaskRef(db: Db): string | undefined {
  try {
    const task = (JSON.parse(runRow(db)?.config ?? "null") as { task?: unknown } | null)?.task;
    return typeof task === "string" ? task.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}

/** How many of a replay's own records wait before they are written, in one transaction. */
const REPLAY_BATCH = 256;

/**
 * A replay's own records (`hone replay`), written by the run's ResponseStore and EvaluationRecords on their connection:
 * each record is serialised as it is served and written in order, REPLAY_BATCH at a time in one transaction, and at the
 * close; a read writes what waits first. Written one by one, each was a commit of its own (~600 in a replay of 9
 * rollouts: ~2,800 more WAL pages written and ~3,400 more locks taken); a replay is a copy made again at will, and one
 * that stops is removed, so nothing it has not finished is worth a commit.
 */
class ReplayBatch {
  private readonly pending: (() => void)[] = [];
  constructor(
    private readonly db: Db,
    private readonly own: ResponseStore,
    private readonly evaluations: EvaluationRecords,
  ) {}
  private add(write: () => void): void {
    this.pending.push(write);
    if (this.pending.length >= REPLAY_BATCH) this.flush();
  }
  flush(): void {
    const writes = this.pending.splice(0);
    if (writes.length > 0)
      this.db.transaction(() => {
        for (const write of writes) write();
      })();
  }
  responses(): ResponseRecords {
    return {
      get: (key) => {
        this.flush();
        return this.own.get(key);
      },
      put: (key, model, response) => {
        const text = JSON.stringify(response);
        const at = new Date().toISOString();
        this.add(() => this.own.putText(key, model, text, at));
      },
    };
  }
  evaluationSink(): EvaluationSink {
    return {
      get: (key) => {
        this.flush();
        return this.evaluations.get(key);
      },
      put: (key, e) => {
        const text = JSON.stringify(e);
        this.add(() => this.evaluations.putText(key, text));
      },
    };
  }
}

/** The run's record stores, opened once; models and evaluators built through it are cached, recorded or replayed. */
export class Recording {
  readonly mode: CacheMode;
  private readonly own: ResponseRecords;
  private readonly shared?: ResponseStore;
  private readonly source?: ResponseRecords;
  private readonly evaluations: EvaluationSink;
  private readonly sourceEvaluations?: EvaluationSink;
  /** A replay's own records waiting to be written (`hone replay` only). */
  private readonly batch?: ReplayBatch;
  /** The recorded run (`hone replay`): its folder and the tasks its rollouts measured. */
  private readonly sourceRun?: {
    dir: string;
    task?: string;
    tasks: ReturnType<typeof recordedTasks>;
    evaluators: ReturnType<typeof recordedEvaluators>;
  };
  /**
   * One connection per hone.db for both of its record tables: a write through one connection makes every other
   * connection to the file read its pages again, and a job's records go in as one transaction.
   */
  private readonly dbs: Db[] = [];
  private readonly importAll: (records: ShippedRecords) => void;

  constructor(runDir: string, s: RecordingSettings) {
    this.mode = s.cache?.mode ?? "read-write";
    const db = this.open(runDir);
    const own = new ResponseStore(db);
    const evaluations = new EvaluationRecords(db);
    // Only a replay of a recorded run: a new run's records (--cache replay included) are each committed as made, so
    // that a run stopped on the way resumes from all it got.
    this.batch = s.replayOf && this.mode === "replay" ? new ReplayBatch(db, own, evaluations) : undefined;
    this.own = this.batch ? this.batch.responses() : own;
    this.evaluations = this.batch ? this.batch.evaluationSink() : evaluations;
    const sharedWanted = this.mode === "read-write" || (this.mode === "replay" && !s.replayOf);
    // --cache replay only reads the shared cache: a read-only one serves it.
    if (sharedWanted)
      this.shared = new ResponseStore(s.cache?.dir ? join(s.cache.dir, "requests.db") : defaultCachePath(), undefined, {
        readonly: this.mode === "replay",
      });
    if (s.replayOf) {
      // The recorded run is only read: a replay never changes it (a damaged record is reported, never removed), and
      // it adds no table, -wal or -shm of its own there.
      const path = join(resolve(s.replayOf), "hone.db");
      const source = openDb(path, { readonly: true });
      this.dbs.push(source);
      this.source = new RecordedResponses(source, path);
      this.sourceEvaluations = new RecordedEvaluations(source, path);
      this.sourceRun = {
        dir: resolve(s.replayOf),
        task: recordedTaskRef(source),
        tasks: recordedTasks(source),
        evaluators: recordedEvaluators(source),
      };
    }
    const importAll = db.transaction((records: ShippedRecords) => {
      for (const r of records.responses) own.put(r.key, r.model, r.response);
      for (const e of records.evaluations) evaluations.put(e.key, e.result);
    });
    this.importAll = (records) => {
      this.batch?.flush(); // in the order the records were made
      importAll(records);
    };
  }

  private open(runDir: string): Db {
    const db = openRecordDb(join(runDir, "hone.db"));
    this.dbs.push(db);
    return db;
  }

  /**
   * A model for a role: cached and recorded; in replay mode served from records, without any endpoint. `started`
   * is its endpoint when already started (resolveModel(m), begun before the run's records were opened).
   */
  async model(
    m: Partial<ModelSettings> & { model: string },
    started?: Promise<ResolvedModel>,
  ): Promise<ResolvedModel & { model: CachedModel }> {
    const options = {
      mode: this.mode,
      endpoint: cacheEndpoint(m),
      read: this.shared ? [this.shared] : [],
      write: this.mode === "read-write" && this.shared ? [this.shared] : [],
      record: this.own,
      replayFrom: this.source ? [this.source] : undefined,
    };
    if (this.mode === "replay")
      return {
        model: withCache(replayClient(m), options),
        baseUrl: "replay",
        modelName: m.model,
        offline: m.model === "offline",
        close: async () => {},
      };
    const r = await (started ?? resolveModel(m as ModelSettings));
    return { ...r, model: withCache(r.model, options) };
  }

  /** An evaluator whose every result is recorded; in a replay of a recorded run, served from its records only. */
  evaluator(live: Evaluate, taskHash: string): ScopedEvaluate {
    const replayFrom = this.mode === "replay" && this.sourceEvaluations ? [this.sourceEvaluations] : undefined;
    if (replayFrom) this.refuseChangedTask(taskHash);
    return recordingEvaluator(live, taskHash, this.evaluations, replayFrom);
  }

  /**
   * The evaluator's Python and numpy versions for the run's measurement identity: a replayed run's as it recorded them
   * (its evaluations are those records, whatever Python is here), else those of the task's Python on this machine.
   */
  evaluatorRuntime(task: DiscoveryTask, taskHash: string): Promise<EvaluatorRuntime | undefined> {
    if (this.mode === "replay" && this.sourceEvaluations)
      return Promise.resolve(this.sourceRun?.tasks.find((t) => t.content === taskHash)?.evaluator);
    return evaluatorRuntime(task).then((r) => sandboxed(r, task));
  }

  /**
   * In a replay, the evaluator versions the recorded run named for rollout `id` (`{ runtime }`, undefined inside when
   * it named none): each rollout's identity is replayed as it was recorded, whichever machine measured it. Undefined
   * outside a replay or for a rollout the recorded run does not hold.
   */
  recordedEvaluator(id: string): { runtime: EvaluatorRuntime | undefined } | undefined {
    const evaluators = this.mode === "replay" && this.sourceEvaluations ? this.sourceRun?.evaluators : undefined;
    return evaluators?.has(id) ? { runtime: evaluators.get(id) } : undefined;
  }

  /**
   * A replay's task must be the one the recorded run measured, file for file: its evaluations are recorded under the
   * task's content hash, so a task folder changed since would make every evaluation a miss, reported as a record
   * that was never made. Refused before anything runs, naming the task and both hashes. (A run whose hash another
   * version's rules made is refused before this, by its version: hone-version.ts.)
   */
  private refuseChangedTask(taskHash: string): void {
    const run = this.sourceRun;
    if (!run?.tasks.length || run.tasks.some((t) => t.content === taskHash)) return;
    const then = run.tasks.map((t) => `${t.id} ${t.content.slice(0, 12)}…`).join(", ");
    // A built-in task is named by its id: only another version of hone changes its folder.
    const builtin = run.task !== undefined && builtinTaskIds().includes(run.task);
    const remedy = builtin
      ? `the built-in task ${run.task} of this hone differs from the one of the hone that recorded the run: replay it with that hone (its version is on the run's receipt), or start a new run`
      : `Put the task folder${run.task ? ` (${run.task})` : ""} back as it was, or start a new run on the task as it is now`;
    throw new HoneError(
      "usage",
      `replay: the task has changed since ${run.dir} was recorded: its files now hash to ${taskHash.slice(0, 12)}…, the run measured ${then}; its recorded evaluations are of that content. ${remedy}`,
    );
  }

  /** Records a worker or Slurm job made, into the run's own records. */
  import(shipped: unknown): void {
    if (shipped) this.importAll(readRecords(shipped));
  }

  close(): void {
    try {
      this.batch?.flush();
    } finally {
      this.shared?.close();
      for (const db of this.dbs.splice(0)) db.close();
    }
  }
}
