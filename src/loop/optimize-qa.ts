// `hone optimize --benchmark`: the search on a QA benchmark. Round 0 measures the seed harness on the train slice;
// each round the method proposes (specs or folders, as on discovery tasks), every candidate is measured on the
// train slice task by task (recorded as hone eval's measurements are: task_results, model calls, responses), the
// method's keep rule and the ratchet (a strictly better train mean than the incumbent's) move the incumbent, and
// the final choice is measured once on the validation slice, which no method or proposer ever sees.
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import { loadHarness } from "../harness/package.ts";
import type { Harness } from "../harness/types.ts";
import type { Budget, Candidate } from "../method/method.ts";
import type { ModelSettings, ResolvedModel } from "../model/resolve.ts";
import { gateGeneratedCode } from "../sandbox/check.ts";
import { candidateOfCommit, finishRound, roundCandidates, setRewards, startRound } from "../store/candidates.ts";
import { createRunDb, type Db, finishRun, openDb } from "../store/db.ts";
import { type DecisionRow, insertDecisions } from "../store/decisions.ts";
import { HarnessRepo } from "../store/git.ts";
import type { TaskResultRow } from "../store/qa.ts";
import { loadSplit, type QATask, type Split } from "../task/qa/benchmarks.ts";
import type { BenchmarkSettings, OptimizeEvent, OptimizeResult, OptimizeSettings } from "./optimize.ts";
import { buildArchive } from "./optimize-archive.ts";
import { gateProblems, type SearchContext, type SearchTarget } from "./optimize-context.ts";
import { keepWithMethod, proposeWithMethod } from "./optimize-method.ts";
import { failRound, proposeRoundTtt, roundGate, type TttParams } from "./optimize-proposals.ts";
import { emitProposals, methodOf, seedCandidate } from "./optimize-rounds.ts";
import { measurePanel } from "./qa-measure.ts";
import { LocalQARunner } from "./qa-runner.ts";
import { Recording } from "./recording.ts";

/** A harness version the QA search holds: its commit, folder and train mean. */
interface QAIncumbent {
  id: string;
  commit: string;
  dir: string;
  score: number | null;
}

/** A QA benchmark as the search's target: the proposer is told the benchmark and the train slice, never gold answers. */
export function qaTarget(b: BenchmarkSettings): SearchTarget {
  const description = `Answer ${b.id} questions correctly; each answer is scored by the benchmark's official rule.`;
  return {
    kind: "qa",
    id: b.id,
    metric: "accuracy",
    direction: "maximize",
    brief: { kind: "qa", id: b.id, description, metric: "accuracy", direction: "maximize" },
    proposerTask: {
      kind: "qa",
      id: b.id,
      description,
      metric: "accuracy",
      direction: "maximize",
      measuredBy: `Each harness answers the same ${b.train} train questions once; its mean score is its result.`,
    },
    showRewards: true,
    gate: (dir) => gateProblems(dir),
  };
}

/** Everything a QA search needs, opened once: records, versions, splits, models and the QA runner. */
export class QAContext implements SearchContext {
  readonly runId = "run";
  readonly target: SearchTarget;
  constructor(
    readonly dir: string,
    readonly db: Db,
    readonly repo: HarnessRepo,
    readonly settings: OptimizeSettings,
    readonly benchmark: BenchmarkSettings,
    readonly splits: { train: QATask[]; validation: QATask[] },
    public proposer: ResolvedModel,
    readonly proposerHarness: Harness,
    readonly emit: (e: OptimizeEvent) => void,
    readonly recording: Recording,
    readonly runner: LocalQARunner,
  ) {
    this.target = qaTarget(benchmark);
  }
  candidateDir(id: string, commit: string): string {
    const dir = join(this.dir, "candidates", id);
    if (!existsSync(join(dir, "agent.yaml"))) this.repo.materialize(commit, dir);
    return dir;
  }
  /** A candidate's train results as the proposer reads them: its mean and the questions it got wrong. */
  workOf(c: Candidate | undefined): { results?: string } {
    if (!c?.measured) return {};
    const wrong = c.measured.feedback.length ? `\nWrong answers:\n${c.measured.feedback.join("\n")}` : "";
    return { results: `Train mean ${c.measured.score ?? "unmeasured"} on ${this.splits.train.length} questions.${wrong}` };
  }
  budget(): Budget {
    const k = this.settings.proposals;
    return { unit: "evaluator_calls", total: this.splits.train.length * (1 + this.settings.rounds * k), used: 0 };
  }
  async close(): Promise<void> {
    await this.runner.close();
    await this.proposer.close();
    this.recording.close();
    this.db.close();
  }
}

async function openQA(settings: OptimizeSettings, runDir: string, emit: (e: OptimizeEvent) => void): Promise<QAContext> {
  const b = settings.benchmark as BenchmarkSettings;
  const load = (split: Split, limit: number) => loadSplit(b.id, split, { dir: b.dataDir, seed: b.splitSeed, limit });
  const splits = { train: await load("train", b.train), validation: await load("validation", b.validation) };
  const proposerHarness = loadHarness(settings.proposerHarness);
  const dbPath = join(runDir, "hone.db");
  createRunDb(dbPath, "optimize", settings);
  const db = openDb(dbPath);
  const gitDir = join(runDir, "harnesses.git");
  const repo = existsSync(join(gitDir, "HEAD")) ? new HarnessRepo(gitDir) : HarnessRepo.init(gitDir);
  const recording = new Recording(runDir, settings);
  const runner = new LocalQARunner({
    model: settings.executor as ModelSettings,
    concurrency: settings.concurrency,
    recording,
  });
  let proposer: ResolvedModel;
  try {
    proposer = await recording.model(settings.proposer);
  } catch (err) {
    await runner.close();
    recording.close();
    db.close();
    throw err;
  }
  const ctx = new QAContext(runDir, db, repo, settings, b, splits, proposer, proposerHarness, emit, recording, runner);
  const info = { runDir, resumed: false, task: b.id, rounds: settings.rounds, paired: false, maxEvals: 1 };
  emit({ type: "start", ...info });
  return ctx;
}

/** The mean score over a measurement's tasks without an infrastructure failure; null when every task failed. */
function meanOf(rows: TaskResultRow[]): number | null {
  const ok = rows.filter((r) => r.status !== "infra");
  return ok.length ? ok.reduce((a, r) => a + r.score, 0) / ok.length : null;
}

/** Measures a harness version on a split: the train measurement's id is the candidate's (what the archive reads). */
async function measure(ctx: QAContext, c: QAIncumbent, round: number, split: "train" | "validation"): Promise<number | null> {
  const id = split === "train" ? c.id : `${c.id}-validation`;
  const panel = ctx.splits[split];
  const harness = loadHarness(c.dir, { generatedCode: gateGeneratedCode });
  const rows = await measurePanel(
    ctx.db,
    ctx.dir,
    ctx.runId,
    {
      id,
      round,
      candidateId: c.id,
      commit: c.commit,
      contentHash: harness.contentHash,
      benchmark: ctx.benchmark.id,
      split,
      tasks: panel.length,
      panel,
      harnessDir: c.dir,
      seedOf: () => ctx.settings.seed,
      trajectoryDir: join("trajectories", id),
    },
    ctx.runner,
    ctx.recording,
    (r) => ctx.emit({ type: "rollout_done", round, job: `${id}/${r.task_id}`, score: r.status === "infra" ? null : r.score }),
  );
  return meanOf(rows);
}

/**
 * The round's decisions: among the measured candidates the method keeps (harnessttt keeps every measured one), the
 * best train mean is promoted when it is strictly better than the incumbent's; every other candidate is rejected.
 */
function decide(ctx: QAContext, round: number, inc: QAIncumbent, kept: (c: Candidate) => boolean) {
  const cands = buildArchive(ctx).candidates.filter((c) => c.round === round && c.commit);
  const decisions: DecisionRow[] = [];
  let winner: Candidate | undefined;
  for (const c of cands) {
    const score = c.measured?.score ?? null;
    if (c.status !== "measured" || score === null) continue;
    if (kept(c) && (inc.score === null || score > inc.score) && (!winner || score > (winner.measured?.score ?? -1))) winner = c;
  }
  for (const c of cands) {
    const score = c.measured?.score ?? null;
    const base = { candidate_id: c.id, score, detail: { incumbent: inc.score, method_kept: kept(c) } };
    if (c.status !== "measured" || score === null)
      decisions.push({ ...base, decision: "unmeasurable", rule: "train_mean", reason: c.reason ?? "not measured" });
    else if (c === winner)
      decisions.push({ ...base, decision: "promote", rule: "train_mean", reason: `train mean ${score} > ${inc.score}` });
    else {
      const why = !kept(c)
        ? "the method did not keep it"
        : winner
          ? `${winner.id} scored higher`
          : `train mean ${score} is not above the incumbent's ${inc.score}`;
      decisions.push({ ...base, decision: "reject", rule: "train_mean", reason: why });
    }
  }
  return { decisions, winner };
}

async function qaRound(ctx: QAContext, round: number, inc: QAIncumbent): Promise<QAIncumbent> {
  const { db, runId, settings } = ctx;
  startRound(db, runId, round, "proposing", inc.commit, inc.score);
  ctx.emit({ type: "round_start", round, incumbentScore: inc.score });
  const { method, params } = methodOf(ctx);
  const ttt = method.name === "harnessttt";
  const incCand = buildArchive(ctx).candidates.find((c) => c.id === inc.id);
  if (ttt) {
    const parent = { commit: inc.commit, dir: inc.dir, score: inc.score ?? undefined, work: ctx.workOf(incCand) };
    await proposeRoundTtt(ctx, round, parent, params as TttParams);
  } else await proposeWithMethod(ctx, round, inc, method, params);
  const cands = roundCandidates(db, runId, round);
  emitProposals(ctx, round, cands);
  if (ttt) {
    const gate = roundGate(cands, settings.proposals, params as TttParams);
    if (!gate.passed) {
      failRound(ctx, round, cands, gate);
      ctx.emit({ type: "round_end", round, incumbentScore: inc.score, bestScore: null, moved: false, rewards: [] });
      return inc;
    }
  }
  for (const c of cands.filter((x) => x.commit_sha)) {
    const commit = c.commit_sha as string;
    await measure(ctx, { id: c.id, commit, dir: ctx.candidateDir(c.id, commit), score: null }, round, "train");
  }
  if (!ttt) keepWithMethod(ctx, round, method, params);
  const { decisions, winner } = decide(ctx, round, inc, (c) => ttt || c.kept?.keep === true);
  const bestScore = winner?.measured?.score ?? null;
  db.transaction(() => {
    insertDecisions(db, runId, round, decisions);
    if (ttt)
      setRewards(
        db,
        decisions.map((d) => ({ id: d.candidate_id, reward: null, advantage: null, score: d.score })),
      );
    finishRound(db, runId, round, bestScore, winner !== undefined);
  })();
  let next = inc;
  if (winner?.commit) {
    if (!ctx.repo.fastForwardMain(winner.commit, inc.commit)) throw new Error(`main cannot fast-forward to ${winner.commit}`);
    next = { id: winner.id, commit: winner.commit, dir: ctx.candidateDir(winner.id, winner.commit), score: bestScore };
  }
  const rewards = decisions.map((d) => d.score);
  ctx.emit({ type: "round_end", round, incumbentScore: next.score, bestScore, moved: next !== inc, rewards });
  return next;
}

/** Round 0: the seed harness measured on the train slice (and kept by the method's rule, as any candidate). */
async function qaRoundZero(ctx: QAContext): Promise<QAIncumbent> {
  const { commit, dir } = await seedCandidate(ctx);
  const seed: QAIncumbent = { id: "r00-seed", commit, dir, score: null };
  ctx.emit({ type: "round_start", round: 0, incumbentScore: null });
  seed.score = await measure(ctx, seed, 0, "train");
  startRound(ctx.db, ctx.runId, 0, "running", commit, seed.score);
  finishRound(ctx.db, ctx.runId, 0, seed.score, false);
  setRewards(ctx.db, [{ id: seed.id, reward: null, advantage: null, score: seed.score }]);
  const { method, params } = methodOf(ctx);
  if (method.name !== "harnessttt") keepWithMethod(ctx, 0, method, params);
  ctx.emit({ type: "round_end", round: 0, incumbentScore: seed.score, bestScore: seed.score, moved: false, rewards: [] });
  return seed;
}

/** Runs the QA search in `runDir` (already checked to be new and empty) and measures its choice on validation. */
export async function optimizeQA(
  settings: OptimizeSettings,
  runDir: string,
  emit: (e: OptimizeEvent) => void,
  nextRound: (round: number) => boolean,
  summarize: (db: Db, runId: string) => OptimizeResult["rounds"],
): Promise<OptimizeResult> {
  const ctx = await openQA(settings, runDir, emit);
  try {
    let inc = await qaRoundZero(ctx);
    for (let round = 1; round <= settings.rounds && nextRound(round); round++) inc = await qaRound(ctx, round, inc);
    const validation = await measure(ctx, inc, settings.rounds + 1, "validation");
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
  rmSync(bestDir, { recursive: true, force: true });
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
