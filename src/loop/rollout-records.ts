import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { type IdentityParts, identityDigest } from "../measure/identity.ts";
import type { Db } from "../store/db.ts";
import { type EvaluationRecordRow, insertRollout, type ModelCallRow } from "../store/rollouts.ts";

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
  const identity = identityBase
    ? { ...identityBase, sampling: start?.sampling ?? {}, harness: start?.harness?.content_hash ?? "" }
    : undefined;
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
