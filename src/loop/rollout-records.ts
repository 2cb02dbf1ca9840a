import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { type IdentityParts, identityDigest } from "../measure/identity.ts";
import type { Db } from "../store/db.ts";
import { type EvaluationRecordRow, insertRollout, type ModelCallRow } from "../store/rollouts.ts";
import type { EvaluatorRuntime } from "../task/evaluator-runtime.ts";

export { finishedRolloutIds, type RolloutRow, roundRollouts } from "../store/rollouts.ts";

type Event = Record<string, unknown>;

/** A trajectory file's events. */
export function readEvents(path: string): Event[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
}

/** The model calls of a trajectory, as records. */
export function modelCallsOf(events: Event[]): ModelCallRow[] {
  return events
    .filter((x) => x.type === "model_call")
    .map((e) => {
      const u = e.usage as { prompt_tokens: number; completion_tokens: number };
      return {
        latencyMs: e.latency_ms as number,
        promptTokens: u.prompt_tokens,
        completionTokens: u.completion_tokens,
        attempts: e.attempts as number,
        cached: Boolean(e.cached),
        faults: e.faults ? JSON.stringify(e.faults) : null,
      };
    });
}

/**
 * The file a rollout measured on another machine (a BullMQ worker, a Slurm node) leaves in its folder: the evaluator's
 * Python, numpy and sandbox there, as that machine measured it. The rollout's identity names them instead of the
 * coordinator's, so a run (its receipt, a replay, a comparison) says where they differ; a local rollout has none.
 */
export const EVALUATOR_FILE = "evaluator.json";

const VERSION = /^[0-9A-Za-z.+_-]{1,64}$/;

/** A runtime as a machine reported it, or undefined for anything else (a worker's file is checked, never trusted). */
export function evaluatorRuntimeOf(value: unknown): EvaluatorRuntime | undefined {
  const v = value as { python?: unknown; numpy?: unknown; sandbox?: unknown } | null;
  if (typeof v !== "object" || v === null || typeof v.python !== "string" || !VERSION.test(v.python)) return undefined;
  if (!(v.numpy === null || (typeof v.numpy === "string" && VERSION.test(v.numpy)))) return undefined;
  if (!(v.sandbox === undefined || v.sandbox === "bubblewrap" || v.sandbox === "none")) return undefined;
  return { python: v.python, numpy: v.numpy, ...(v.sandbox ? { sandbox: v.sandbox } : {}) };
}

/** The runtime a rollout's folder says it was measured under (EVALUATOR_FILE), or undefined when it says none. */
export function readEvaluatorFile(dir: string): EvaluatorRuntime | undefined {
  try {
    return evaluatorRuntimeOf(JSON.parse(readFileSync(join(dir, EVALUATOR_FILE), "utf8")));
  } catch {
    return undefined;
  }
}

/**
 * Reads a finished rollout's directory (result.json, trajectory.jsonl, best program) into hone.db in one
 * transaction: the rollout, its evaluations and its model calls. A rollout is finished exactly when its row exists.
 */
export function recordRollout(
  db: Db,
  runDir: string,
  r: {
    runId: string;
    round: number;
    candidateId: string;
    kind: "candidate" | "parent" | "baseline";
    id: string;
    dir: string;
    seed: number;
  },
  identityBase?: Omit<IdentityParts, "sampling" | "harness">,
): void {
  const result = JSON.parse(readFileSync(join(r.dir, "result.json"), "utf8"));
  const events = readEvents(join(r.dir, "trajectory.jsonl"));
  const programFile = readdirSync(r.dir).find((f) => f.startsWith("best_program"));
  const bestProgram = programFile ? readFileSync(join(r.dir, programFile), "utf8") : null;
  const start = events.find((e) => e.type === "rollout_start") as
    | { harness?: { content_hash: string }; sampling?: Record<string, unknown> }
    | undefined;
  // Measured on a worker or Slurm node: under that machine's evaluator, whatever the coordinator's is.
  const remote = identityBase && readEvaluatorFile(r.dir);
  const base = identityBase && remote ? { ...identityBase, task: { ...identityBase.task, evaluator: remote } } : identityBase;
  const identity = base ? { ...base, sampling: start?.sampling ?? {}, harness: start?.harness?.content_hash ?? "" } : undefined;
  const evaluations: EvaluationRecordRow[] = events
    .filter((e) => e.type === "evaluation")
    .map((e) => ({
      index: e.index as number,
      valid: Boolean(e.valid),
      score: (e.score as number | null) ?? null,
      reason: (e.reason as string | undefined) ?? null,
      programSha: e.program_sha256 as string,
      seconds: (e.seconds as number | undefined) ?? null,
    }));
  const usage = result.usage ?? {};
  insertRollout(
    db,
    r.runId,
    {
      id: r.id,
      round: r.round,
      candidateId: r.candidateId,
      kind: r.kind,
      seed: r.seed,
      status: result.status,
      stopReason: result.stopReason ?? result.stop_reason ?? null,
      error: result.error ?? null,
      startScore: result.startScore ?? result.start_score ?? null,
      bestScore: result.bestScore ?? result.best_score ?? null,
      improved: Boolean(result.improved),
      evalsUsed: result.evaluations?.used ?? 0,
      evalsInvalid: result.evaluations?.invalid ?? 0,
      promptTokens: usage.prompt_tokens ?? 0,
      completionTokens: usage.completion_tokens ?? 0,
      modelCalls: usage.model_calls ?? 0,
      seconds: usage.seconds ?? 0,
      dir: relative(runDir, r.dir) || ".",
      bestProgram,
      identity: identity ? JSON.stringify(identity) : null,
      identityDigest: identity ? identityDigest(identity) : null,
    },
    evaluations,
    modelCallsOf(events),
  );
}

export const rolloutDirFinished = (dir: string) => existsSync(join(dir, "result.json"));
