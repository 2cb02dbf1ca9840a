// Noise in an optimize run: round 0 repeats the seed's evaluation to measure it; later rounds re-evaluate programs
// to compare them beyond it. Every re-evaluation is outside every rollout's budget, recorded in noise_evaluations
// (reused on resume) and in the run's evaluation records (replayed exactly).
import { estimateNoise, type NoiseEstimate, needsAnotherRepeat, type RepeatScore } from "../measure/noise.ts";
import { sha256 } from "../runtime/discovery-env.ts";
import { insertNoiseEvaluation, loadNoise, type NoisePurpose, noiseEvaluations, saveNoise } from "../store/noise.ts";
import type { Evaluation } from "../task/evaluation.ts";
import { evaluateIn } from "../task/recorded-evaluations.ts";
import { pad, type RunContext } from "./optimize-context.ts";

export const DEFAULT_NOISE_REPEATS = 3;

/** What the comparison rules act on: the run's noise estimate and the repeats each comparison makes. */
export interface RunNoise extends NoiseEstimate {
  repeats: number;
}

/** Stochastic comparisons need at least two repeats a side; `--noise-repeats 1` keeps single-score rules. */
export const comparesRepeats = (n: RunNoise) => n.stochastic && n.repeats >= 2;

const score = (e: Evaluation): RepeatScore => (e.valid && e.score !== undefined ? e.score : null);

/** Evaluations as they are kept: artifacts cut, so a chatty evaluator cannot bloat the records. */
function kept(e: Evaluation): Evaluation {
  const artifacts = Object.fromEntries(
    Object.entries(e.artifacts).map(([k, v]) => [k, typeof v === "string" ? v.slice(-2000) : v]),
  );
  return { ...e, artifacts };
}

/**
 * The repeats of one program in one round, in order, up to `count` (or while `more` says so). Recorded repeats are
 * reused (a resumed round measures nothing twice); each new one is its own scope in the evaluation records
 * (`noise-rNN#i`), so a resumed round and its replay key every repeat the same way.
 */
export async function repeats(
  ctx: RunContext,
  round: number,
  program: string,
  purpose: NoisePurpose,
  more: (so_far: RepeatScore[]) => boolean,
): Promise<Evaluation[]> {
  const sha = sha256(program);
  const out: Evaluation[] = noiseEvaluations(ctx.db, ctx.runId, round, sha).map((r) => JSON.parse(r.result) as Evaluation);
  while (more(out.map(score))) {
    const idx = out.length;
    const e = kept(await evaluateIn(ctx.evaluate, `noise-r${pad(round)}#${idx}`)(program));
    insertNoiseEvaluation(ctx.db, ctx.runId, round, sha, {
      idx,
      purpose,
      valid: e.valid ? 1 : 0,
      score: score(e),
      reason: e.reason ?? null,
      seconds: e.seconds,
      result: JSON.stringify(e),
    });
    out.push(e);
  }
  return out;
}

/** N repeats (for comparisons). */
export const repeatsOf = (ctx: RunContext, round: number, program: string, purpose: NoisePurpose, n: number) =>
  repeats(ctx, round, program, purpose, (s) => s.length < n);

/**
 * Round 0: the seed program evaluated up to `noiseRepeats` times under the repeat rule (declared by the task, or
 * stop once two evaluations agree bit for bit); the estimate is saved as the run's noise. Returns every evaluation
 * (the first is the seed rollout's starting evaluation) and the estimate.
 */
export async function measureSeedNoise(
  ctx: RunContext,
  program: string,
): Promise<{ evaluations: Evaluation[]; noise: RunNoise }> {
  const n = Math.max(1, ctx.settings.noiseRepeats ?? DEFAULT_NOISE_REPEATS);
  const rule = { repeats: n, declared: ctx.task.stochastic };
  const evaluations = await repeats(ctx, 0, program, "seed", (s) => needsAnotherRepeat(s, rule));
  const estimate = estimateNoise(evaluations.map(score), rule);
  const noise = { ...estimate, repeats: n };
  if (!loadNoise(ctx.db, ctx.runId))
    saveNoise(ctx.db, ctx.runId, {
      program_sha: sha256(program),
      repeats: n,
      stochastic: noise.stochastic ? 1 : 0,
      basis: noise.basis,
      n: noise.n,
      invalid: noise.invalid,
      mean: noise.mean,
      sd: noise.sd,
      spread: noise.spread,
    });
  return { evaluations, noise };
}

export const validScores = (es: Evaluation[]) => es.map(score).filter((s): s is number => s !== null);
