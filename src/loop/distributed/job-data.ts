import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { canonicalJson } from "../../canonical-json.ts";
import { contentHash, listFiles } from "../../harness/files.ts";
import { isRecord } from "../../harness/formats/package-reader.ts";
import { HONE_VERSION } from "../../measure/identity.ts";
import type { ModelSettings } from "../../model/resolve.ts";
import type { RolloutOutcome } from "../../runtime/rollout.ts";
import { folderFiles } from "../../store/rollout-files.ts";
import type { TrajectoryEvent } from "../../store/trajectory.ts";
import type { Evaluation } from "../../task/evaluation.ts";
import { PYTHON_DIR } from "../../task/python-env.ts";
import type { QATask } from "../../task/qa/benchmarks.ts";
import type { TaskResult } from "../qa-task.ts";
import type { ShippedRecords } from "../recording.ts";

/**
 * A harness package as a job names it: its digest (`packageDigest`), and its files when they travel with the job (a
 * Slurm job's data file). A queued job carries the digest alone: the coordinator puts each package into the queue's
 * Redis once (`packageKey`), and a worker fetches it the first time it meets the digest.
 */
export interface JobHarness {
  digest: string;
  files?: Record<string, string>;
}

/**
 * The hone a measurement is made with, beyond the task's own folder: its version, and a digest of its evaluation
 * runtime (the Python under src/task/python: the shared checks the built-in evaluators import, the program runner,
 * the tool runner), which a task's content hash does not cover. A worker whose hone differs would score the same
 * program otherwise.
 */
export interface HoneBuild {
  version: string;
  runtime: string;
}

/** hone's build as its files are now: what an evaluator process started now loads. */
export function currentHoneBuild(): HoneBuild {
  const files = listFiles(PYTHON_DIR).filter((f) => f.endsWith(".py") && !f.split("/").includes("__pycache__"));
  return { version: HONE_VERSION, runtime: contentHash(PYTHON_DIR, files) };
}

let build: HoneBuild | undefined;

/** The hone a coordinator names in its jobs: its build as of its first job (once per process, off each job's path). */
export function honeBuild(): HoneBuild {
  build ??= currentHoneBuild();
  return build;
}

/**
 * Why a job made by another hone may not be measured by `ours` (naming what differs), or undefined when it may: a
 * job from a coordinator that does not say its hone is taken as before.
 */
export function honeBuildRefusal(theirs: unknown, ours: HoneBuild, who: string): string | undefined {
  if (theirs === undefined) return undefined;
  const t = (isRecord(theirs) ? theirs : {}) as Partial<HoneBuild>;
  const diffs: string[] = [];
  if (t.version !== ours.version) diffs.push(`version ${ours.version} here, ${String(t.version)} on the coordinator`);
  if (t.runtime !== ours.runtime)
    diffs.push(
      `evaluation runtime (src/task/python) ${ours.runtime.slice(0, 12)} here, ${String(t.runtime).slice(0, 12)} on the coordinator`,
    );
  if (diffs.length === 0) return undefined;
  return `${who}: this hone differs from the coordinator's (${diffs.join("; ")}); refusing to measure with a different hone: run the same hone on the coordinator and its workers`;
}

/**
 * One rollout as it travels through a queue: everything a worker needs to run it, nothing secret. The harness
 * travels by digest (or as its files); the task as a reference the worker resolves locally plus the content hash it
 * must match; the executor's settings name the API key's environment variable, never the key.
 */
export interface RolloutJobData {
  runKey: string;
  jobId: string;
  harness: JobHarness;
  task: { ref: string; tasksDir?: string; contentHash: string };
  executor: Partial<ModelSettings> & { model: string };
  seed: number;
  maxEvals: number;
  startProgram: string;
  startEvaluation: Evaluation;
  timeLimitSec?: number;
  /** The coordinator's hone (absent from an older coordinator's jobs). */
  hone?: HoneBuild;
  /**
   * Set by a coordinator that takes the job's records as their own field of the result (RolloutJobReturn.records);
   * without it (an older coordinator) a worker ships them as records.json among the files.
   */
  recordsBeside?: true;
}

/** One QA task (hone eval, hone train) as it travels: the package by digest, the task itself, public settings. */
export interface QAJobData {
  kind: "qa";
  runKey: string;
  jobId: string;
  harness: JobHarness;
  benchmark: string;
  task: QATask;
  seed: number;
  repeat?: number;
  executor: Partial<ModelSettings> & { model: string };
  /** The coordinator's hone (absent from an older coordinator's jobs). */
  hone?: HoneBuild;
}

export interface QAJobReturn {
  worker: string;
  result: TaskResult;
  events: TrajectoryEvent[];
  /** The model responses the job got, keyed as the coordinator keys its own records. */
  records?: ShippedRecords;
}

/**
 * sha256 over a package as it travels: each file's name and text, by name, each preceded by its length in bytes, so
 * that no two packages share a digest (with separators alone, a text holding "\0name\0text" would pass for two files).
 * A value that is not a string throws.
 */
export function packageDigest(files: Record<string, string>): string {
  const h = createHash("sha256");
  const field = (text: string) => h.update(`${Buffer.byteLength(text)}:`).update(text);
  for (const name of Object.keys(files).sort()) {
    const text = files[name];
    if (typeof text !== "string") throw new Error(`the harness package's file ${name} is not text`);
    field(name);
    field(text);
  }
  return h.digest("hex");
}

/** A package's files with their digest, as a job carries them inline. */
export const inlineHarness = (files: Record<string, string>): Required<JobHarness> => ({ digest: packageDigest(files), files });

/**
 * The harness a job names. A job from a coordinator older than `harness` carries `harnessFiles` instead, and is run
 * as before.
 */
export function jobHarness(d: RolloutJobData | QAJobData): JobHarness {
  if (isRecord(d.harness)) return d.harness;
  const old = (d as { harnessFiles?: unknown }).harnessFiles;
  if (isRecord(old)) return inlineHarness(old as Record<string, string>);
  throw new Error("the job names no harness package");
}

/** The Redis key (under the queue's prefix) that holds the package of `digest` as JSON, put there once by a coordinator. */
export const packageKey = (digest: string) => `package:${digest}`;

export const isQAJob = (d: RolloutJobData | QAJobData): d is QAJobData => (d as QAJobData).kind === "qa";

/**
 * What is wrong with a queued job's data for a worker to run it, or undefined when it has a rollout's or a QA task's
 * shape: anyone who can write to the queue's Redis can add a job, and one of another shape is refused with its
 * field named rather than failing somewhere inside ("Cannot read properties of null").
 */
export function jobDataFault(d: unknown): string | undefined {
  if (!isRecord(d)) return "its data is not an object";
  const text = (v: unknown) => typeof v === "string";
  const checks: [string, boolean][] = [
    ["jobId", text(d.jobId)],
    ["harness", isRecord(d.harness) || (d.harness === undefined && isRecord(d.harnessFiles))],
    ["executor.model", isRecord(d.executor) && text(d.executor.model)],
    ["seed", Number.isFinite(d.seed)],
  ];
  if (d.kind === "qa") checks.push(["benchmark", text(d.benchmark)], ["task.id", isRecord(d.task) && text(d.task.id)]);
  else {
    const t = isRecord(d.task) ? d.task : {};
    checks.push(
      ["task.ref", text(t.ref)],
      ["task.contentHash", text(t.contentHash)],
      ["task.tasksDir", t.tasksDir === undefined || t.tasksDir === null || text(t.tasksDir)],
      ["maxEvals", Number.isInteger(d.maxEvals) && (d.maxEvals as number) >= 0],
      ["startProgram", text(d.startProgram)],
      ["startEvaluation", isRecord(d.startEvaluation)],
    );
  }
  const bad = checks.filter(([, ok]) => !ok).map(([field]) => field);
  return bad.length ? `its data is not a hone ${d.kind === "qa" ? "QA" : "rollout"} job's (${bad.join(", ")})` : undefined;
}

/** What a worker sends back: the rollout directory's files (result, trajectory, programs) and its records. */
export interface RolloutJobReturn {
  worker: string;
  files: Record<string, string>;
  /** The model responses and evaluations the job got, keyed as the coordinator keys its own records. */
  records?: ShippedRecords;
  error?: string;
}

/**
 * The id a job has in a queue: its name plus a digest of everything that identifies the work (the harness's files,
 * the task or its content hash, the seed and repeat, the budget and starting program, the executor's settings), so a
 * queue's add-if-absent never hands one job's result to a job that differs in any of them, and a restarted
 * coordinator finds exactly its own finished jobs.
 */
export function queueJobId(runKey: string, d: RolloutJobData | QAJobData): string {
  const { runKey: _r, ...work } = d;
  const digest = createHash("sha256").update(canonicalJson(work)).digest("hex").slice(0, 24);
  return `${runKey}--${d.jobId}--${digest}`.replace(/[^A-Za-z0-9_.-]/g, "_");
}

export function packDir(dir: string): Record<string, string> {
  return Object.fromEntries(listFiles(dir).map((f) => [f, readFileSync(join(dir, f), "utf8")]));
}

/** Writes `files` under `dir`; every path is checked before anything is written, and one that leaves it is refused. */
export function unpackDir(files: Record<string, string>, dir: string): void {
  // A path of named parts only: no "..", no absolute path, no "." or empty part (which would name the folder itself).
  const bad = Object.keys(files).find(
    (f) => f.includes("..") || f.startsWith("/") || f.split("/").some((part) => part === "" || part === "."),
  );
  if (bad !== undefined) throw new Error(`refusing a file path that leaves its folder: ${bad}`);
  const into = folderFiles(dir);
  for (const [f, text] of Object.entries(files)) into.write(f, text);
}

/** Writes a rollout's files that travelled back into `outDir`, which appears whole or not at all (a `.partial` renamed). */
export function placeRollout(files: Record<string, string>, outDir: string): void {
  const partial = `${outDir}.partial`;
  removeIfThere(partial);
  try {
    unpackDir(files, partial);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  removeIfThere(outDir);
  mkdirSync(dirname(outDir), { recursive: true });
  renameSync(partial, outDir);
}

/** Removes what stands at `path` (a link itself, never what it names); looked for first, since node 20's `rmSync`
 * finds a path absent by throwing, which costs more than the look on a coordinator's path for every job. */
function removeIfThere(path: string): void {
  if (lstatSync(path, { throwIfNoEntry: false })) rmSync(path, { recursive: true, force: true });
}

/**
 * A rollout's outcome as its files give it (result.json's text and its best program's), as the local pool returns it
 * with each result: a remote runner's results carry it too, so a run's progress shows each rollout's best score
 * whatever ran it. Undefined when there is no result.json or it does not have a rollout outcome's shape.
 */
export function outcomeFromFiles(resultJson: string | undefined, bestProgram: string | undefined): RolloutOutcome | undefined {
  if (resultJson === undefined) return undefined;
  let r: unknown;
  try {
    r = JSON.parse(resultJson);
  } catch {
    return undefined;
  }
  if (!isRecord(r)) return undefined;
  const { job: _job, seed: _seed, ...o } = r as Partial<RolloutOutcome> & { job?: unknown; seed?: unknown };
  const ok =
    (o.status === "completed" || o.status === "failed") &&
    typeof o.evaluations?.used === "number" &&
    typeof o.usage?.model_calls === "number" &&
    (o.bestScore === undefined || typeof o.bestScore === "number");
  return ok ? ({ ...o, bestProgram: bestProgram ?? "" } as RolloutOutcome) : undefined;
}

/** Settings without anything secret-looking: only model, endpoint, dialect and the key's variable name travel. */
export function publicSettings(s: Partial<ModelSettings> & { model: string }): Partial<ModelSettings> & { model: string } {
  const { model, baseUrl, dialect, apiKeyEnv, keepSampling, stream, timeouts, offlineLatencyMs, retry } = s;
  return { model, baseUrl, dialect, apiKeyEnv, keepSampling, stream, timeouts, offlineLatencyMs, retry };
}

/** A rollout job as it travels: the package's files, the task by reference and content hash, public settings. */
export function toJobData(
  job: { id: string; harnessDir: string; seed: number; maxEvals: number; startProgram: string; startEvaluation: Evaluation },
  o: {
    runKey: string;
    taskRef: string;
    tasksDir?: string;
    taskHash: string;
    executor: Partial<ModelSettings> & { model: string };
    timeLimitSec?: number;
    /** The package as the job carries it (by default its files, read from `job.harnessDir`). */
    harness?: JobHarness;
  },
): RolloutJobData {
  return {
    runKey: o.runKey,
    jobId: job.id,
    harness: o.harness ?? inlineHarness(packDir(job.harnessDir)),
    task: { ref: o.taskRef, tasksDir: o.tasksDir, contentHash: o.taskHash },
    executor: publicSettings(o.executor),
    seed: job.seed,
    maxEvals: job.maxEvals,
    startProgram: job.startProgram,
    startEvaluation: job.startEvaluation,
    timeLimitSec: o.timeLimitSec,
    hone: honeBuild(),
  };
}
