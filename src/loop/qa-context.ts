// The context of a QA search (`hone optimize --benchmark`): its records, harness versions, the train and validation
// slices, the proposer and the QA runner, opened once (also on resume: the records are reopened, nothing is reset);
// and the measurement of one harness version on a slice, task by task, resumed where a kill left it.
import { join } from "node:path";
import { HoneError } from "../errors.ts";
import { loadHarness } from "../harness/package.ts";
import { isHarnessFolder } from "../harness/program.ts";
import type { Harness } from "../harness/types.ts";
import type { Budget, Candidate } from "../method/method.ts";
import type { ModelSettings, ResolvedModel } from "../model/resolve.ts";
import { gateGeneratedCode } from "../sandbox/check.ts";
import { createRunDb, type Db, extendRunRounds, openDb, runQueueKey } from "../store/db.ts";
import { HarnessRepo } from "../store/git.ts";
import type { TaskResultRow } from "../store/qa.ts";
import { loadSplit, type QATask, type Split } from "../task/qa/benchmarks.ts";
import type { BenchmarkSettings, OptimizeEvent, OptimizeSettings } from "./optimize.ts";
import { gateProblems, type SearchContext, type SearchTarget } from "./optimize-context.ts";
import { measurePanel } from "./qa-measure.ts";
import { LocalQARunner, type QARunner } from "./qa-runner.ts";
import { Recording } from "./recording.ts";

/** A harness version the QA search holds: its candidate id, commit, folder and train mean. */
export interface QAIncumbent {
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
    readonly runner: QARunner,
  ) {
    this.target = qaTarget(benchmark);
  }
  candidateDir(id: string, commit: string): string {
    const dir = join(this.dir, "candidates", id);
    if (!isHarnessFolder(dir)) this.repo.materialize(commit, dir);
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

/** Opens (or, on resume, reopens) a QA search's records in `runDir`. */
export async function openQA(
  settings: OptimizeSettings,
  runDir: string,
  resumed: boolean,
  emit: (e: OptimizeEvent) => void,
): Promise<QAContext> {
  const b = settings.benchmark as BenchmarkSettings;
  const load = (split: Split, limit: number) => loadSplit(b.id, split, { dir: b.dataDir, seed: b.splitSeed, limit });
  const splits = { train: await load("train", b.train), validation: await load("validation", b.validation) };
  for (const [split, tasks] of Object.entries(splits))
    if (tasks.length === 0)
      throw new HoneError(
        "badTask",
        `${b.id}: its ${split} split has no questions in ${b.dataDir ?? "hone's data folder"} (a test-only benchmark's search pool is a quarter of its test file, and none when that file is too small); fetch the whole benchmark (hone datasets fetch ${b.id}) or point --data-dir at a folder that holds it`,
      );
  const proposerHarness = loadHarness(settings.proposerHarness);
  const dbPath = join(runDir, "hone.db");
  createRunDb(dbPath, "optimize", settings);
  const db = openDb(dbPath, { replay: Boolean(settings.replayOf) });
  if (resumed) extendRunRounds(db, settings.rounds);
  const gitDir = join(runDir, "harnesses.git");
  const repo = HarnessRepo.forRun(gitDir);
  const recording = new Recording(runDir, settings);
  const runner = settings.queue
    ? await queueRunner(settings, db)
    : new LocalQARunner({ model: settings.executor as ModelSettings, concurrency: settings.concurrency, recording });
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
  emit({ type: "start", runDir, resumed, task: b.id, rounds: settings.rounds, paired: settings.paired, maxEvals: 1 });
  return ctx;
}

/** The mean score over a measurement's tasks without an infrastructure failure; null when every task failed. */
export function meanOf(rows: TaskResultRow[]): number | null {
  const ok = rows.filter((r) => r.status !== "infra");
  return ok.length ? ok.reduce((a, r) => a + r.score, 0) / ok.length : null;
}

/**
 * Measures a harness version on a split (the train measurement's id is the candidate's: what the archive reads);
 * the tasks a killed run recorded are kept, the rest are run.
 */
export async function measureVersion(
  ctx: QAContext,
  c: QAIncumbent,
  round: number,
  split: "train" | "validation",
): Promise<number | null> {
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
 * The BullMQ runner for a QA search (`--queue`), loaded only then: its key derives from the run's creation, so a
 * resumed coordinator finds the questions that finished on the workers meanwhile instead of running them twice.
 */
async function queueRunner(settings: OptimizeSettings, db: Db): Promise<QARunner> {
  const { BullmqQARunner } = await import("./distributed/bullmq.ts");
  return new BullmqQARunner({
    url: settings.queue as string,
    runKey: runQueueKey(db, "optqa"),
    executor: settings.executor,
  });
}
