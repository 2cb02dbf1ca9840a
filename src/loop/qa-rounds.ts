// The rounds of a QA search, resumable after a kill as a discovery search's are (optimize-rounds.ts): a finished or
// failed round is read back from its decisions; an unfinished one is redone from what it recorded (its proposals
// reused, the tasks already answered kept), so the resumed run ends as an uninterrupted one would.

import { type LoraSettings, loraStep, resumeAdapter } from "../method/lora.ts";
import type { Candidate } from "../method/method.ts";
import { finishRound, lastFinishedRound, roundCandidates, roundState, setRewards, startRound } from "../store/candidates.ts";
import { insertDecisions } from "../store/decisions.ts";
import { taskResults } from "../store/qa.ts";
import { buildArchive } from "./optimize-archive.ts";
import { keepByRatchet, keepWithMethod, proposeWithMethod } from "./optimize-method.ts";
import { failRound, proposeRoundTtt, roundGate, type TttParams } from "./optimize-proposals.ts";
import { emitProposals, methodOf, seedCandidate } from "./optimize-rounds.ts";
import { meanOf, measureVersion, type QAContext, type QAIncumbent } from "./qa-context.ts";
import { decideRound, qaIncumbentAfter } from "./qa-ratchet.ts";
import { qaRoundRewards } from "./qa-rewards.ts";

/** Round 0: the seed harness measured on the train slice (and kept by the method's rule, as any candidate). */
export async function qaRoundZero(ctx: QAContext): Promise<QAIncumbent> {
  const { commit, dir } = await seedCandidate(ctx);
  const seed: QAIncumbent = { id: "r00-seed", commit, dir, score: null };
  if (roundState(ctx.db, ctx.runId, 0)?.status === "finished") {
    seed.score = meanOf(taskResults(ctx.db, seed.id));
    ctx.emit({ type: "round_start", round: 0, incumbentScore: seed.score });
  } else {
    ctx.emit({ type: "round_start", round: 0, incumbentScore: null });
    seed.score = await measureVersion(ctx, seed, 0, "train");
    startRound(ctx.db, ctx.runId, 0, "running", commit, seed.score);
    ctx.db.transaction(() => {
      setRewards(ctx.db, [{ id: seed.id, reward: null, advantage: null, score: seed.score }]);
      finishRound(ctx.db, ctx.runId, 0, seed.score, false);
    })();
  }
  const { method, params } = methodOf(ctx);
  // Idempotent: a candidate decided before keeps its decision.
  if (method.name !== "harnessttt") keepWithMethod(ctx, 0, method, params);
  ctx.emit({ type: "round_end", round: 0, incumbentScore: seed.score, bestScore: seed.score, moved: false, rewards: [] });
  return seed;
}

/** The round's proposals: those a killed run recorded, else the method's (harnessttt: K independent samples). */
async function proposals(ctx: QAContext, round: number, inc: QAIncumbent) {
  const { method, params } = methodOf(ctx);
  if (roundCandidates(ctx.db, ctx.runId, round).length === 0) {
    if (method.name === "harnessttt") {
      const incCand = buildArchive(ctx).candidates.find((c) => c.id === inc.id);
      const parent = { commit: inc.commit, dir: inc.dir, score: inc.score ?? undefined, work: ctx.workOf(incCand) };
      await proposeRoundTtt(ctx, round, parent, params as TttParams);
    } else await proposeWithMethod(ctx, round, inc, method, params);
  }
  return roundCandidates(ctx.db, ctx.runId, round);
}

export async function qaRound(ctx: QAContext, round: number, inc: QAIncumbent): Promise<QAIncumbent> {
  const { db, runId, settings } = ctx;
  const existing = roundState(db, runId, round);
  if (existing?.status === "finished" || existing?.status === "failed") return qaIncumbentAfter(ctx, round, inc);
  startRound(db, runId, round, "proposing", inc.commit, inc.score);
  ctx.emit({ type: "round_start", round, incumbentScore: inc.score });
  const { method, params } = methodOf(ctx);
  const ttt = method.name === "harnessttt";
  const cands = await proposals(ctx, round, inc);
  emitProposals(ctx, round, cands);
  if (ttt) {
    const gate = roundGate(cands, settings.proposals, params as TttParams);
    if (!gate.passed) {
      failRound(ctx, round, cands, gate, () => keepByRatchet(ctx, method.name, round));
      ctx.emit({ type: "round_end", round, incumbentScore: inc.score, bestScore: null, moved: false, rewards: [] });
      return inc;
    }
  }
  for (const c of cands.filter((x) => x.commit_sha)) {
    const commit = c.commit_sha as string;
    await measureVersion(ctx, { id: c.id, commit, dir: ctx.candidateDir(c.id, commit), score: null }, round, "train");
  }
  if (!ttt) keepWithMethod(ctx, round, method, params);
  const { decisions, winner } = decideRound(ctx, round, inc, (c: Candidate) => ttt || c.kept?.keep === true);
  const rewards = ttt ? qaRoundRewards(buildArchive(ctx), cands, inc, db) : { values: [], advantages: [], write: () => {} };
  const bestScore = winner?.measured?.score ?? null;
  db.transaction(() => {
    insertDecisions(db, runId, round, decisions);
    if (ttt) keepByRatchet(ctx, method.name, round); // harnessttt keeps by the ratchet, recorded with its decisions
    rewards.write();
    finishRound(db, runId, round, bestScore, winner !== undefined);
  })();
  let next = inc;
  if (winner?.commit) {
    if (!ctx.repo.fastForwardMain(winner.commit, inc.commit)) throw new Error(`main cannot fast-forward to ${winner.commit}`);
    next = { id: winner.id, commit: winner.commit, dir: ctx.candidateDir(winner.id, winner.commit), score: bestScore };
  }
  ctx.emit({ type: "round_end", round, incumbentScore: next.score, bestScore, moved: next !== inc, rewards: rewards.values });
  if (ttt) await learn(ctx, round);
  return next;
}

/** `lora` proposer learning after a harnessttt round: the round's own samples with their advantages (method/lora.ts). */
async function learn(ctx: QAContext, round: number): Promise<void> {
  const { learning, proposer } = ctx.settings;
  if (learning.mode !== "lora" || !learning.lora) return;
  // Only `hone replay` (a recorded run it reproduces) skips training; a new run with --cache replay trains.
  const replay = Boolean(ctx.settings.replayOf);
  const adapter = await loraStep(ctx.db, ctx.runId, round, ctx.dir, learning.lora, proposer, replay);
  if (adapter) ctx.proposer = await ctx.recording.model({ ...proposer, model: adapter });
}

/** On resume with `lora` learning: the adapter trained after the last finished round, loaded again. */
export async function resumeQAAdapter(ctx: QAContext): Promise<void> {
  const lora: LoraSettings | undefined = ctx.settings.learning.mode === "lora" ? ctx.settings.learning.lora : undefined;
  if (!lora) return;
  const adapter = await resumeAdapter(ctx.db, ctx.runId, ctx.dir, lora, lastFinishedRound(ctx.db), ctx.settings.proposer);
  if (adapter) ctx.proposer = await ctx.recording.model({ ...ctx.settings.proposer, model: adapter });
}
