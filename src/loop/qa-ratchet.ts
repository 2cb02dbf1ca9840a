// The ratchet of a QA search: which of a round's candidates becomes the incumbent. A candidate is promoted only when
// the method keeps it (harnessttt keeps every measured one) and it clears the incumbent beyond the noise on the same
// train questions (qa-noise.ts); among those the best train mean wins. Deciding again after a kill gives the same
// decisions: everything is read from the records.
import type { Archive, Candidate } from "../method/method.ts";
import { commitOfCandidate } from "../store/candidates.ts";
import { type DecisionRow, roundDecisions } from "../store/decisions.ts";
import { buildArchive } from "./optimize-archive.ts";
import { DEFAULT_NOISE_REPEATS } from "./optimize-noise.ts";
import type { QAContext, QAIncumbent } from "./qa-context.ts";
import { clearsPairedNoise, type PairedComparison } from "./qa-noise.ts";

export interface QADecided {
  decisions: DecisionRow[];
  winner: Candidate | undefined;
}

/** Whether the run compares beyond the noise (`noise_repeats` ≥ 2, the default) or by single scores. */
export const qaComparesNoise = (ctx: QAContext) => (ctx.settings.noiseRepeats ?? DEFAULT_NOISE_REPEATS) >= 2;

const detailOf = (inc: QAIncumbent, kept: boolean, cmp?: PairedComparison) => ({
  incumbent: inc.score,
  method_kept: kept,
  ...(cmp ? { pairs: cmp.n, difference: cmp.difference, margin: cmp.margin, interval: cmp.interval } : {}),
});

/** A round's decisions over its committed candidates, against the incumbent `inc`; `kept` is the method's keep. */
export function decideQA(
  archive: Archive,
  round: number,
  inc: QAIncumbent,
  kept: (c: Candidate) => boolean,
  o: { noise: boolean },
): QADecided {
  const incPerTask = archive.candidates.find((c) => c.id === inc.id)?.measured?.perTask ?? {};
  const cands = archive.candidates.filter((c) => c.round === round && c.commit);
  const decisions: DecisionRow[] = [];
  const passing: { c: Candidate; row: DecisionRow }[] = [];
  // The round promotes the best of the candidates compared with the incumbent: each clears it at the corrected level.
  const comparisons = cands.filter((c) => c.status === "measured" && c.measured?.score != null && kept(c)).length;
  for (const c of cands) {
    const score = c.measured?.score ?? null;
    if (c.status !== "measured" || score === null) {
      const reason = c.reason ?? "not measured";
      decisions.push({ candidate_id: c.id, decision: "unmeasurable", rule: "train_measurement", reason, score, detail: null });
      continue;
    }
    if (!kept(c)) {
      const reason = `the method did not keep it: ${c.kept?.reason ?? "no keep decision"}`;
      const detail = detailOf(inc, false);
      decisions.push({ candidate_id: c.id, decision: "reject", rule: c.kept?.rule || "method_keep", reason, score, detail });
      continue;
    }
    const cmp = clearsPairedNoise(c.measured?.perTask ?? {}, incPerTask, { ...o, comparisons });
    const row: DecisionRow = {
      candidate_id: c.id,
      decision: "reject",
      rule: cmp.rule,
      reason: cmp.reason,
      score,
      detail: detailOf(inc, true, cmp),
    };
    if (cmp.better) passing.push({ c, row });
    else decisions.push(row);
  }
  const best = passing.reduce<(typeof passing)[number] | undefined>(
    (w, p) => (!w || (p.row.score as number) > (w.row.score as number) ? p : w),
    undefined,
  );
  for (const p of passing)
    decisions.push(
      p === best ? { ...p.row, decision: "promote" } : { ...p.row, reason: `${p.row.reason}, but ${best?.c.id} scored higher` },
    );
  return { decisions, winner: best?.c };
}

/** A round's decisions in a run (the archive read from its records). */
export function decideRound(ctx: QAContext, round: number, inc: QAIncumbent, kept: (c: Candidate) => boolean): QADecided {
  return decideQA(buildArchive(ctx), round, inc, kept, { noise: qaComparesNoise(ctx) });
}

/** On resume: the incumbent after a finished round, from its recorded decisions (main moved there if a kill kept it back). */
export function qaIncumbentAfter(ctx: QAContext, round: number, inc: QAIncumbent): QAIncumbent {
  const win = roundDecisions(ctx.db, ctx.runId, round).find((d) => d.decision === "promote");
  const commit = win ? commitOfCandidate(ctx.db, win.candidate_id) : null;
  if (!win || !commit) return inc;
  if (!ctx.repo.fastForwardMain(commit, inc.commit)) throw new Error(`main cannot fast-forward to ${commit}`);
  return { id: win.candidate_id, commit, dir: ctx.candidateDir(win.candidate_id, commit), score: win.score };
}
