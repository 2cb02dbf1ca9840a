// `hone optimize --benchmark`: the search on a QA benchmark. Round 0 measures the seed harness on the train slice;
// each round the method proposes (specs or folders, as on discovery tasks), every candidate is measured on the
// train slice task by task (recorded as hone eval's measurements are: task_results, model calls, responses), the
// method's keep rule and the noise-aware ratchet (qa-ratchet.ts) move the incumbent, and the final choice is measured
// once on the validation slice, which no method or proposer ever sees. A killed run resumes (qa-rounds.ts) and a
// finished one replays from its records. qa-context.ts opens the run; qa-rewards.ts credits harnessttt's slots.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import { candidateOfCommit } from "../store/candidates.ts";
import { type Db, finishRun } from "../store/db.ts";
import type { OptimizeEvent, OptimizeResult, OptimizeSettings } from "./optimize.ts";
import { measureVersion, openQA, type QAContext, type QAIncumbent } from "./qa-context.ts";
import { qaRound, qaRoundZero, resumeQAAdapter } from "./qa-rounds.ts";

/** Runs (or, `resumed`, continues) the QA search in `runDir` and measures its choice on validation. */
export async function optimizeQA(
  settings: OptimizeSettings,
  runDir: string,
  emit: (e: OptimizeEvent) => void,
  nextRound: (round: number) => boolean,
  summarize: (db: Db, runId: string) => OptimizeResult["rounds"],
  resumed = false,
): Promise<OptimizeResult> {
  const ctx = await openQA(settings, runDir, resumed, emit);
  try {
    let inc = await qaRoundZero(ctx);
    if (resumed) await resumeQAAdapter(ctx);
    for (let round = 1; round <= settings.rounds && nextRound(round); round++) inc = await qaRound(ctx, round, inc);
    const validation = await measureVersion(ctx, inc, settings.rounds + 1, "validation");
    const rounds = summarize(ctx.db, ctx.runId);
    const startScore = rounds[0]?.incumbentScore ?? null;
    const bestDir = writeBest(ctx, inc, validation);
    const b = ctx.benchmark;
    const summary = {
      best_score: inc.score,
      best_commit: inc.commit,
      best_candidate: inc.id,
      start_score: startScore,
      benchmark: b.id,
      train: { tasks: ctx.splits.train.length, score: inc.score },
      validation: { tasks: ctx.splits.validation.length, score: validation, measurement: `${inc.id}-validation` },
    };
    writeFileSync(join(runDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
    finishRun(ctx.db, summary);
    return {
      runDir,
      runId: ctx.runId,
      bestHarnessPath: bestDir,
      bestScore: inc.score,
      startScore,
      noise: undefined,
      rounds,
      validationScore: validation,
      writeBestProgram: () => {},
    };
  } finally {
    await ctx.close();
  }
}

function writeBest(ctx: QAContext, inc: QAIncumbent, validation: number | null): string {
  const bestDir = join(ctx.dir, "best");
  ctx.repo.materialize(inc.commit, bestDir);
  const cand = candidateOfCommit(ctx.db, inc.commit);
  const spec = cand?.spec ? toYaml(JSON.parse(cand.spec)) : "# the seed harness: no spec applied\n{}\n";
  writeFileSync(join(bestDir, "spec.yaml"), spec);
  const meta = {
    candidate: inc.id,
    round: cand?.round ?? 0,
    commit: inc.commit,
    benchmark: ctx.benchmark.id,
    train_score: inc.score,
    validation_score: validation,
    metric: "accuracy",
    direction: "maximize",
  };
  writeFileSync(join(bestDir, "meta.json"), `${JSON.stringify(meta, null, 2)}\n`);
  return bestDir;
}
