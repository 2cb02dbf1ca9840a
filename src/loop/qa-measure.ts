// Measuring one harness version on a QA panel (hone eval, hone train): every task's result is recorded as it
// arrives (task_results, model_calls, the model responses for replay); a measurement killed midway resumes with
// the tasks it has, and is `pending` until every task has a result.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { TaskMeasurement } from "../method/criteria.ts";
import type { Db } from "../store/db.ts";
import {
  finishMeasurement,
  insertTaskResult,
  type MeasurementStart,
  startMeasurement,
  type TaskResultRow,
  type TaskStatus,
  taskResults,
} from "../store/qa.ts";
import { insertModelCalls } from "../store/rollouts.ts";
import type { QATask } from "../task/qa/benchmarks.ts";
import { type QAJob, type QARunner, qaJobId } from "./qa-runner.ts";
import type { TaskResult } from "./qa-task.ts";
import type { Recording } from "./recording.ts";
import { modelCallsOf, readEvents } from "./rollout-records.ts";

export interface PanelMeasurement extends MeasurementStart {
  harnessDir: string;
  tasks: number;
  panel: QATask[];
  /** The seed of the i-th task's job. */
  seedOf: (i: number) => number;
  /** Where trajectories go, relative to the run directory. */
  trajectoryDir: string;
  /** A second measurement of the same tasks (a re-measure): its jobs get ids of their own, never the first's. */
  repeat?: number;
}

export const statusOf = (r: TaskResult): TaskStatus => (r.status === "failed" ? "infra" : r.correct ? "solved" : "unsolved");

/** The longest a trajectory file's name grows from its task id (a file system allows 255 bytes). */
const NAME_CHARS = 100;

/**
 * Each task's trajectory file name: its id with characters other than letters, digits, '.', '_', '-' made '_', the
 * same as before for every id that fits and differs from the panel's other ids so made; a longer id, or one that
 * would take a name an earlier task of the panel has (`a/b` after `a_b`), gets a digest of the whole id after its
 * first 100 characters, so no two tasks of a panel write one file.
 */
export function trajectoryNames(panel: readonly QATask[]): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>();
  for (const { id } of panel) {
    const safe = id.replace(/[^A-Za-z0-9._-]/g, "_");
    let name = safe.length <= NAME_CHARS ? safe : "";
    if (!name || taken.has(name))
      name = `${safe.slice(0, NAME_CHARS)}-${createHash("sha256").update(id).digest("hex").slice(0, 16)}`;
    taken.add(name);
    names.set(id, `${name}.jsonl`);
  }
  return names;
}

function row(i: number, job: QAJob, r: TaskResult, trajectory: string): TaskResultRow {
  return {
    task_id: job.task.id,
    idx: i,
    job_id: job.id,
    seed: job.seed,
    status: statusOf(r),
    score: r.score,
    steps: r.modelCalls,
    tokens: r.tokens,
    error: r.error ?? null,
    extracted: r.extracted ?? null,
    answer: r.answer ?? null,
    detail: r.metrics ? JSON.stringify(r.metrics) : null,
    trajectory,
  };
}

/**
 * Measures a harness on a panel through a runner; tasks already recorded for this measurement are not run again.
 * Calls `onResult` for each task as it finishes (recorded or new), in finishing order.
 */
export async function measurePanel(
  db: Db,
  runDir: string,
  runId: string,
  m: PanelMeasurement,
  runner: QARunner,
  recording: Recording | undefined,
  onResult?: (r: TaskResultRow, result?: TaskResult) => void,
): Promise<TaskResultRow[]> {
  startMeasurement(db, runId, m);
  const done = new Map(taskResults(db, m.id).map((r) => [r.task_id, r]));
  for (const r of done.values()) onResult?.(r);
  mkdirSync(join(runDir, m.trajectoryDir), { recursive: true });
  const names = trajectoryNames(m.panel);
  const fileName = (id: string) => names.get(id) as string;
  const jobs = m.panel.flatMap((task, i): (QAJob & { i: number })[] =>
    done.has(task.id)
      ? []
      : [
          {
            i,
            id: qaJobId({ benchmark: m.benchmark, task, contentHash: m.contentHash, seed: m.seedOf(i), repeat: m.repeat }),
            harnessDir: m.harnessDir,
            benchmark: m.benchmark,
            task,
            seed: m.seedOf(i),
            trajectoryPath: join(runDir, m.trajectoryDir, fileName(task.id)),
          },
        ],
  );
  const byId = new Map(jobs.map((j) => [j.id, j]));
  if (jobs.length)
    for await (const r of runner.run(jobs)) {
      const job = byId.get(r.id);
      if (!job) continue;
      const rec = row(job.i, job, r.result, join(m.trajectoryDir, fileName(job.task.id)));
      recording?.import(r.records);
      db.transaction(() => {
        insertTaskResult(db, m.id, rec);
        insertModelCalls(db, runId, "executor", job.id, m.round, modelCallsOf(r.events ?? []));
      })();
      done.set(job.task.id, rec);
      onResult?.(rec, r.result);
    }
  finishMeasurement(db, m.id);
  return m.panel.map((t) => done.get(t.id) as TaskResultRow);
}

/**
 * How many of a task's model replies were no valid action at the first attempt, after harness-training's
 * `first_attempt_total - first_attempt_valid` (src/rollout/telemetry.py): a reply is invalid when a tool call in it
 * was refused by the agent loop (arguments that are no JSON object, a tool that does not exist) or when it called no
 * tool where an action is a tool call (`textIsAction` false: every benchmark but the conversational ones). A tool's
 * own error (a calculator given a bad expression) is a valid action with a failed outcome, as there. Undefined when
 * the trajectory holds no model reply (a program harness): the metric is unavailable, never a count of 0.
 */
export function invalidFirstAttemptsOf(events: Record<string, unknown>[], textIsAction: boolean): number | undefined {
  const calls = events.filter((e) => e.type === "model_call").length;
  if (calls === 0) return undefined;
  const invalid = new Set<unknown>();
  for (const e of events) {
    if (e.type === "tool_result" && e.refused === true) invalid.add(e.iteration);
    if (e.type === "assistant" && !textIsAction && Array.isArray(e.tool_calls) && e.tool_calls.length === 0)
      invalid.add(e.iteration);
  }
  return invalid.size;
}

/**
 * The panel's content as one digest (each task's id, question and gold, in order): what a receipt names as the task,
 * so two runs on a re-fetched or edited data file, or another --data-dir, are told apart.
 */
export function panelHash(panel: readonly QATask[]): string {
  const h = createHash("sha256");
  for (const t of panel) h.update(JSON.stringify([t.id, t.question, t.gold])).update("\n");
  return h.digest("hex");
}

/**
 * A measurement as criteria read it. With `runDir`, each task's invalid first attempts are counted from its
 * trajectory (what a resumed run reads back too); a task whose trajectory is missing has none measured.
 */
export function asMeasurement(
  commit: string,
  rows: TaskResultRow[],
  o: { runDir?: string; textIsAction?: boolean } = {},
): { commit: string; tasks: Record<string, TaskMeasurement> } {
  const invalid = (r: TaskResultRow): number | undefined => {
    if (!o.runDir || !r.trajectory) return undefined;
    const path = join(o.runDir, r.trajectory);
    return existsSync(path) ? invalidFirstAttemptsOf(readEvents(path), o.textIsAction ?? false) : undefined;
  };
  return {
    commit,
    tasks: Object.fromEntries(
      rows.map((r) => {
        const n = invalid(r);
        const t: TaskMeasurement = { status: r.status, score: r.score, steps: r.steps, tokens: r.tokens };
        return [r.task_id, n === undefined ? t : { ...t, invalidFirstAttempts: n }];
      }),
    ),
  };
}
