// Noise in an optimize run: round 0 repeats the seed's evaluation to measure it; later rounds re-evaluate programs
// to compare them beyond it. Every re-evaluation is outside every rollout's budget, recorded in noise_evaluations
// (reused on resume) and in the run's evaluation records (replayed exactly).
import {
  estimateNoise,
  type NoiseEstimate,
  needsAnotherRepeat,
  type RepeatScore,
  refuteDeterminism,
  reproduces,
} from "../measure/noise.ts";
import { sha256 } from "../runtime/discovery-env.ts";
import {
  insertNoiseEvaluation,
  loadNoise,
  type NoisePurpose,
  noiseEvaluations,
  saveNoise,
  saveRefutedRound,
} from "../store/noise.ts";
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

export const score = (e: Evaluation): RepeatScore => (e.valid && e.score !== undefined ? e.score : null);

/** Evaluations as they are kept: artifacts cut, so a chatty evaluator cannot bloat the records. */
function kept(e: Evaluation): Evaluation {
  const artifacts = Object.fromEntries(
    Object.entries(e.artifacts).map(([k, v]) => [k, typeof v === "string" ? v.slice(-2000) : v]),
  );
  return { ...e, artifacts };
}

/** One new re-evaluation of `program` in `round`, recorded as repeat `idx` (its own scope `noise-rNN#idx`). */
async function measureRepeat(
  ctx: RunContext,
  round: number,
  program: string,
  purpose: NoisePurpose,
  idx: number,
): Promise<Evaluation> {
  const e = kept(await evaluateIn(ctx.evaluate, `noise-r${pad(round)}#${idx}`)(program));
  insertNoiseEvaluation(ctx.db, ctx.runId, round, sha256(program), {
    idx,
    purpose,
    valid: e.valid ? 1 : 0,
    score: score(e),
    reason: e.reason ?? null,
    seconds: e.seconds,
    result: JSON.stringify(e),
  });
  return e;
}

const recorded = (ctx: RunContext, round: number, program: string) =>
  noiseEvaluations(ctx.db, ctx.runId, round, sha256(program)).map((r) => ({
    idx: r.idx,
    e: JSON.parse(r.result) as Evaluation,
  }));

/**
 * The repeats of one program in one round, in order, while `more` says so (one at a time: each answer decides
 * whether another is needed). Recorded repeats are reused (a resumed round measures nothing twice); each new one is
 * its own scope in the evaluation records (`noise-rNN#i`), so a resumed round and its replay key every repeat the
 * same way.
 */
export async function repeats(
  ctx: RunContext,
  round: number,
  program: string,
  purpose: NoisePurpose,
  more: (so_far: RepeatScore[]) => boolean,
): Promise<Evaluation[]> {
  const out = recorded(ctx, round, program).map((r) => r.e);
  while (more(out.map(score))) out.push(await measureRepeat(ctx, round, program, purpose, out.length));
  return out;
}

/**
 * N repeats (for comparisons and confirmations), all at once on the evaluator pool as a round's rollouts are: the
 * count is fixed, so none waits for another's answer. Those recorded are reused, by index (a round killed while
 * some were running measures only the missing ones); every started one is recorded before this returns or throws.
 */
export async function repeatsOf(
  ctx: RunContext,
  round: number,
  program: string,
  purpose: NoisePurpose,
  n: number,
): Promise<Evaluation[]> {
  const byIdx = new Map(recorded(ctx, round, program).map((r) => [r.idx, r.e]));
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !byIdx.has(i));
  const settled = await Promise.allSettled(missing.map((i) => measureRepeat(ctx, round, program, purpose, i)));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  settled.forEach((s, k) => {
    if (s.status === "fulfilled") byIdx.set(missing[k] as number, s.value);
  });
  return [...byIdx].sort(([a], [b]) => a - b).map(([, e]) => e);
}

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
  const saved = loadNoise(ctx.db, ctx.runId);
  // A resumed run whose deterministic seed was refuted later keeps the refutation (recorded in its noise row).
  if (saved?.basis === "refuted")
    return {
      evaluations,
      noise: { ...estimate, stochastic: true, basis: "refuted", sd: saved.sd, spread: saved.spread, repeats: n },
    };
  const noise = { ...estimate, repeats: n };
  if (!saved) saveNoise(ctx.db, ctx.runId, noiseRow(sha256(program), noise));
  return { evaluations, noise };
}

function noiseRow(programSha: string, noise: RunNoise) {
  return {
    program_sha: programSha,
    repeats: noise.repeats,
    stochastic: noise.stochastic ? 1 : 0,
    basis: noise.basis,
    n: noise.n,
    invalid: noise.invalid,
    mean: noise.mean,
    sd: noise.sd,
    spread: noise.spread,
  };
}

/**
 * Where the seed's repeats agreed (measured deterministic), a single evaluation cannot be trusted on its own: two
 * agreeing repeats are what a fair coin gives half the time. Before a candidate is promoted on one score, its program
 * is re-evaluated `repeats` times at once (the repeats a stochastic comparison would make, reused by it); when one
 * differs (or is invalid) the evaluator is stochastic after all: the run's noise becomes `refuted`, recorded, and
 * this round and every later one decide by the noise rule. A deterministic evaluator pays these repeats only in a
 * round with a candidate to promote; a declared one (hone.yaml `stochastic: false`) never.
 *
 * A re-evaluation that timed out is no evidence either way: how long an evaluation takes depends on the machine's
 * load, not on what the program scores, so a timeout alone never turns a run stochastic. Every other invalid result
 * (the program crashed, raised, printed no score, or the evaluator rejected it) does refute: the program ran to an
 * answer and it was not the score it is to be promoted on. Where every re-evaluation timed out, nothing confirms
 * the score: `unconfirmed`, and the caller promotes nothing on it. `answered` counts the re-evaluations that did not
 * time out (those that reproduced the score, when confirmed), `timedOut` the rest.
 */
export async function confirmDeterministic(
  ctx: RunContext,
  round: number,
  program: string,
  own: number,
): Promise<{ outcome: "confirmed" | "refuted" | "unconfirmed" | "not_needed"; answered: number; timedOut: number }> {
  const noise = ctx.noise;
  if (noise?.basis !== "measured" || noise.stochastic || noise.repeats < 2)
    return { outcome: "not_needed", answered: 0, timedOut: 0 };
  const all = await repeatsOf(ctx, round, program, "candidate", noise.repeats);
  const again = all.filter((e) => !e.timedOut).map(score);
  const counts = { answered: again.length, timedOut: all.length - again.length };
  if (again.length === 0) return { outcome: "unconfirmed", ...counts };
  if (reproduces(own, again)) return { outcome: "confirmed", ...counts };
  const refuted = { ...refuteDeterminism(noise, [own, ...again]), repeats: noise.repeats };
  ctx.noise = refuted;
  const seed = loadNoise(ctx.db, ctx.runId);
  ctx.db.transaction(() => {
    if (seed) saveNoise(ctx.db, ctx.runId, noiseRow(seed.program_sha, refuted));
    saveRefutedRound(ctx.db, round);
  })();
  return { outcome: "refuted", ...counts };
}

export const validScores = (es: Evaluation[]) => es.map(score).filter((s): s is number => s !== null);
