// The ratchet of an optimize run: which candidate's best program and harness become the incumbent, by which rule.
// A candidate is promoted only when its program differs from the incumbent's (content hash) and its score clears
// the incumbent's beyond the measured noise; with --paired it must also beat its own control, and a missing,
// failed or mismatched control makes it unmeasurable (never scored against a fallback). Every decision is recorded.
import { type Comparison, clearsNoise, strictlyBetter } from "../measure/compare.ts";
import { type IdentityParts, identityDifferences } from "../measure/identity.ts";
import { sha256 } from "../runtime/discovery-env.ts";
import { finishRound } from "../store/candidates.ts";
import { type DecisionRow, insertDecisions, roundDecisions } from "../store/decisions.ts";
import { type RolloutRow, roundRollouts } from "../store/rollouts.ts";
import type { Incumbent, RunContext } from "./optimize-context.ts";
import { comparesRepeats, confirmDeterministic, repeatsOf, validScores } from "./optimize-noise.ts";

export interface Contender {
  candidate: string;
  commit: string;
  dir: string;
}

/** A contender that passed every check a single rollout can make; the noise rule comes next. */
interface Eligible {
  c: Contender;
  row: RolloutRow;
  own: number;
  program: string;
  control?: RolloutRow;
}

const ownScore = (ctx: RunContext, r: RolloutRow | undefined) =>
  r ? (ctx.task.direction === "maximize" ? r.own_max : r.own_min) : null;

const parseIdentity = (r: RolloutRow): IdentityParts | undefined => (r.identity ? JSON.parse(r.identity) : undefined);

/** Where a control's evaluator (Python, numpy, sandbox) differs from its candidate's: named, never refused. */
const EVALUATOR = /^task\.evaluator[.:]/;

/**
 * A control is the parent harness at the candidate's seed, model and budget: anything else is not its control. The
 * evaluator's versions may differ (a round resumed on another machine re-runs the control there): `notes`, when
 * given, receives those differences for the decision's detail, and they refuse nothing.
 */
export function controlMismatch(
  candidate: RolloutRow,
  control: RolloutRow,
  parentHash: string | null,
  notes?: string[],
): string[] {
  const problems: string[] = [];
  if (control.seed !== candidate.seed) problems.push(`seed: ${control.seed} ≠ ${candidate.seed}`);
  const a = parseIdentity(candidate);
  const b = parseIdentity(control);
  if (!a || !b) return [...problems, "identity: not recorded"];
  const all = identityDifferences(a, b);
  notes?.push(...all.filter((d) => EVALUATOR.test(d)));
  const differs = all.filter((d) => !d.startsWith("harness:") && !/^sampling\.(?!seed:)/.test(d) && !EVALUATOR.test(d));
  if (parentHash && b.harness !== parentHash)
    problems.push(`harness: the control ran ${b.harness.slice(0, 12)}, not the parent ${parentHash.slice(0, 12)}`);
  return [...problems, ...differs];
}

/** A decision's detail, naming where the candidate's paired control was evaluated under another evaluator. */
function withControlNotes(detail: Record<string, unknown>, e: Eligible): Record<string, unknown> {
  const notes: string[] = [];
  if (e.control) controlMismatch(e.row, e.control, null, notes);
  return notes.length ? { ...detail, control_evaluator_differs: notes } : detail;
}

/** The checks one rollout answers: a final decision, or eligibility for the noise rule. */
function screen(
  ctx: RunContext,
  c: Contender,
  rows: RolloutRow[],
  inc: Incumbent,
  parentHash: string | null,
): DecisionRow | Eligible {
  const row = rows.find((r) => r.candidate_id === c.candidate && r.kind !== "parent");
  const decide = (decision: DecisionRow["decision"], rule: string, reason: string, score: number | null = null): DecisionRow => ({
    candidate_id: c.candidate,
    decision,
    rule,
    reason,
    score,
    detail: null,
  });
  if (row?.status !== "completed")
    return decide("unmeasurable", "rollout_failed", `the rollout did not complete: ${row?.error ?? row?.status ?? "no record"}`);
  const own = ownScore(ctx, row);
  if (own === null || !row.best_program)
    return decide("reject", "no_valid_score", "the rollout found no valid program of its own");
  let control: RolloutRow | undefined;
  if (ctx.settings.paired && c.candidate !== "r00-seed") {
    control = rows.find((r) => r.candidate_id === c.candidate && r.kind === "parent");
    if (!control) return decide("unmeasurable", "control_missing", "its paired control rollout is missing", own);
    if (control.status !== "completed")
      return decide("unmeasurable", "control_failed", `its paired control failed: ${control.error ?? control.status}`, own);
    const mismatch = controlMismatch(row, control, parentHash);
    if (mismatch.length) return decide("unmeasurable", "control_mismatch", `its control differs in ${mismatch.join("; ")}`, own);
  }
  if (sha256(row.best_program) === sha256(inc.program))
    return decide("reject", "same_program", "its best program is the incumbent's program, byte for byte", own);
  const screenCmp = strictlyBetter(own, inc.score, ctx.task.direction);
  if (!screenCmp.better)
    return decide("reject", "strictly_better", `its best evaluation ${screenCmp.reason} (the incumbent)`, own);
  return { c, row, own, program: row.best_program, control };
}

const detailOf = (cmp: Comparison, control?: Comparison) => ({
  difference: cmp.difference,
  margin: cmp.margin,
  interval: cmp.interval,
  candidate: cmp.candidate,
  baseline: cmp.baseline,
  ...(cmp.family ? { family: cmp.family } : {}),
  ...(control
    ? { control: { rule: control.rule, difference: control.difference, interval: control.interval, reason: control.reason } }
    : {}),
});

/**
 * The comparisons of an eligible candidate: against the incumbent, and (paired) against its own control. `comparisons`
 * is how many of the round's candidates are compared with the incumbent's repeats: the round promotes the best of
 * them, so each must clear the incumbent at the Bonferroni-corrected level.
 */
async function compare(
  ctx: RunContext,
  round: number,
  e: Eligible,
  inc: Incumbent,
  incScores: number[] | undefined,
  comparisons: number,
) {
  const direction = ctx.task.direction;
  const noise = ctx.noise;
  if (!noise || !comparesRepeats(noise) || !incScores) {
    const vsInc = strictlyBetter(e.own, inc.score, direction);
    const vsControl = e.control ? strictlyBetter(e.own, e.control.best_score ?? undefined, direction) : undefined;
    return { vsInc, vsControl, score: e.own };
  }
  const n = noise.repeats;
  const mine = await repeatsOf(ctx, round, e.program, "candidate", n);
  const scores = validScores(mine);
  const floorSd = noise.sd;
  if (scores.length < mine.length)
    return { invalid: `invalid in ${mine.length - scores.length} of ${mine.length} repeats`, score: null };
  const vsInc = clearsNoise(scores, incScores, { direction, floorSd, comparisons });
  let vsControl: Comparison | undefined;
  if (e.control?.best_program) {
    const theirs =
      e.control.best_program === inc.program
        ? incScores
        : validScores(await repeatsOf(ctx, round, e.control.best_program, "control", n));
    vsControl = clearsNoise(scores, theirs, { direction, floorSd });
  }
  return { vsInc, vsControl, score: vsInc.candidate.mean };
}

export interface RatchetResult {
  next: Incumbent;
  decisions: DecisionRow[];
  /** The promoted candidate's score, or null when the incumbent stays. */
  bestScore: number | null;
}

/**
 * Decides a round: screens every contender, re-evaluates the eligible ones and the incumbent where the evaluator is
 * stochastic, promotes the best one that clears every rule and moves refs/heads/main by fast-forward only. The
 * caller records the decisions (closeRound); deciding again after a kill gives the same decisions (repeats reused).
 */
export async function ratchet(ctx: RunContext, round: number, inc: Incumbent, contenders: Contender[]): Promise<RatchetResult> {
  const { db, runId, task } = ctx;
  const rows = roundRollouts(db, runId, round);
  const parentHash = ctx.contentHashOf(inc.commit);
  const decisions: DecisionRow[] = [];
  const eligible: Eligible[] = [];
  for (const c of contenders) {
    const s = screen(ctx, c, rows, inc, parentHash);
    if ("decision" in s) decisions.push(s);
    else eligible.push(s);
  }
  const stochastic = ctx.noise !== undefined && comparesRepeats(ctx.noise);
  const incScores =
    stochastic && eligible.length
      ? validScores(await repeatsOf(ctx, round, inc.program, "incumbent", ctx.noise?.repeats ?? 1))
      : undefined;
  const passing: { e: Eligible; score: number; detail: Record<string, unknown>; rule: string; reason: string }[] = [];
  for (const e of eligible) {
    if (incScores && incScores.length < 2) {
      const reason = `the incumbent's program was valid in ${incScores.length} of ${ctx.noise?.repeats} repeats: nothing to compare against`;
      decisions.push({
        candidate_id: e.c.candidate,
        decision: "unmeasurable",
        rule: "welch_interval",
        reason,
        score: null,
        detail: null,
      });
      continue;
    }
    const r = await compare(ctx, round, e, inc, incScores, eligible.length);
    const base = { candidate_id: e.c.candidate, score: r.score };
    if ("invalid" in r) {
      decisions.push({
        ...base,
        decision: "reject",
        rule: "welch_interval",
        reason: `its best program is ${r.invalid}`,
        detail: null,
      });
      continue;
    }
    const detail = withControlNotes(detailOf(r.vsInc, r.vsControl), e);
    if (!r.vsInc.better) decisions.push({ ...base, decision: "reject", rule: r.vsInc.rule, reason: r.vsInc.reason, detail });
    else if (r.vsControl && !r.vsControl.better)
      decisions.push({
        ...base,
        decision: "reject",
        rule: "beats_control",
        reason: `it does not beat its own control: ${r.vsControl.reason}`,
        detail,
      });
    else passing.push({ e, score: r.score, detail, rule: r.vsInc.rule, reason: r.vsInc.reason });
  }
  const better = (a: number, b: number) => (task.direction === "maximize" ? a > b : a < b);
  const winner = passing.reduce<(typeof passing)[number] | undefined>(
    (w, p) => (!w || better(p.score, w.score) ? p : w),
    undefined,
  );
  let unconfirmed = false;
  if (winner && !stochastic) {
    // One score of a measured deterministic evaluator: the winner must reproduce it, else decide again as stochastic;
    // where every re-evaluation timed out, nothing is promoted this round (and the evaluator stays deterministic).
    const confirmation = await confirmDeterministic(ctx, round, winner.e.program, winner.e.own);
    if (confirmation.outcome === "refuted") return ratchet(ctx, round, inc, contenders);
    if (confirmation.outcome === "confirmed") {
      const late = confirmation.timedOut ? ` (${confirmation.timedOut} more timed out)` : "";
      winner.reason += `, reproduced by ${confirmation.answered} re-evaluation${confirmation.answered === 1 ? "" : "s"}${late}`;
    }
    if (confirmation.outcome === "unconfirmed") {
      unconfirmed = true;
      winner.reason += `, but all ${confirmation.timedOut} re-evaluations confirming it timed out: not promoted on one score`;
    }
  }
  for (const p of passing)
    decisions.push({
      candidate_id: p.e.c.candidate,
      decision: p === winner && !unconfirmed ? "promote" : "reject",
      rule: p.rule,
      reason: p === winner ? p.reason : runnerUpReason(p.reason, winner?.e.c.candidate, unconfirmed),
      score: p.score,
      detail: p.detail,
    });
  if (unconfirmed) return { next: inc, decisions, bestScore: null };
  let next = inc;
  if (winner) {
    if (!ctx.repo.fastForwardMain(winner.e.c.commit, inc.commit))
      throw new Error(`main cannot fast-forward to ${winner.e.c.commit}`);
    next = promoted(winner.e.c, winner.e.program, winner.score);
  }
  return { next, decisions, bestScore: winner?.score ?? null };
}

/**
 * Why a candidate that cleared the incumbent was not promoted: another scored higher and was promoted, or (its
 * confirmations all timed out) was not either, so nothing was promoted this round.
 */
function runnerUpReason(reason: string, winner: string | undefined, unconfirmed: boolean): string {
  return unconfirmed
    ? `${reason}, but ${winner} scored higher and only the highest is confirmed; its re-evaluations all timed out, so nothing was promoted this round`
    : `${reason}, but ${winner} scored higher`;
}

/** Records a round's decisions and closes it, with any other writes of the round, in one transaction. */
export function closeRound(ctx: RunContext, round: number, r: RatchetResult, alsoWrite: () => void = () => {}): void {
  ctx.db.transaction(() => {
    insertDecisions(ctx.db, ctx.runId, round, r.decisions);
    alsoWrite();
    finishRound(ctx.db, ctx.runId, round, r.bestScore, r.bestScore !== null);
  })();
}

function promoted(c: Contender, program: string, score: number): Incumbent {
  return {
    commit: c.commit,
    dir: c.dir,
    program,
    score,
    evaluation: { valid: true, score, metrics: {}, artifacts: {}, seconds: 0 },
  };
}

/** On resume: the incumbent after a finished round, from its recorded decisions. */
export function incumbentAfter(ctx: RunContext, round: number, inc: Incumbent): Incumbent {
  const win = roundDecisions(ctx.db, ctx.runId, round).find((d) => d.decision === "promote");
  if (!win || win.score === null) return inc;
  const row = roundRollouts(ctx.db, ctx.runId, round).find((r) => r.candidate_id === win.candidate_id && r.kind !== "parent");
  const commit = ctx.commitOf(win.candidate_id);
  if (!row?.best_program || !commit) return inc;
  return promoted(
    { candidate: win.candidate_id, commit, dir: ctx.candidateDir(win.candidate_id, commit) },
    row.best_program,
    win.score,
  );
}
