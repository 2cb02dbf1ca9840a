import { cpSync, existsSync, lstatSync, mkdirSync, rmSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import { SpecError } from "../harness/compile.ts";
import { contentHash } from "../harness/files.ts";
import { loadHarness } from "../harness/package.ts";
import { isHarnessFolder } from "../harness/program.ts";
import { HONE_VERSION } from "../measure/identity.ts";
import type { Criterion, Measurement } from "../method/criteria.ts";
import type { Estimator } from "../method/estimators.ts";
import type { ModelSettings } from "../model/resolve.ts";
import type { ChatResponse } from "../model/types.ts";
import { finishRound, roundState, setRoundStatus, startRound } from "../store/candidates.ts";
import { createRunDb, type Db, finishRun, openDb, runQueueKey } from "../store/db.ts";
import { HarnessRepo } from "../store/git.ts";
import { measurement, type TaskResultRow, taskResults } from "../store/qa.ts";
import { insertModelCalls } from "../store/rollouts.ts";
import { benchmark, type QATask } from "../task/qa/benchmarks.ts";
import { responseRows } from "./optimize-proposals.ts";
import { asMeasurement, measurePanel, panelHash } from "./qa-measure.ts";
import { LocalQARunner, type QARunner } from "./qa-runner.ts";
import { Recording } from "./recording.ts";
import { type GreedyMonotonic, type HarnessParameter, Loss, TrainingMisuse } from "./train-loss.ts";
import {
  candidateIdOfCommit,
  changedFiles,
  epochCandidate,
  epochId,
  finishedEpochs,
  heldOutId,
  recordCandidate,
  recordSkip,
  recordVerdict,
  retryId,
  trainSummary,
  writeBest,
} from "./train-records.ts";

export { GreedyMonotonic, type HarnessParameter, Loss, TrainingMisuse } from "./train-loss.ts";

export interface TrainerOptions {
  /** Run directory: hone.db, harnesses.git, candidates/ and trajectories/ live here. */
  dir: string;
  seedHarness: string;
  panel: { benchmark: string; tasks: QATask[]; split?: string };
  /**
   * A split the panel is not drawn from, measured once when the epochs end, on the seed harness and on HEAD (neither
   * the estimator nor the criterion sees it); its result is in the summary and best/meta.json.
   */
  heldOut?: { split: string; tasks: QATask[] };
  model: Partial<ModelSettings> & { model: string };
  estimator: Estimator;
  criterion: Criterion;
  optimizer: GreedyMonotonic;
  /** Globs of package files a candidate may change (default: everything). */
  patchSurface?: string[];
  concurrency?: number;
  /** Where panel tasks run (default: the local pool); the trainer does not know which. */
  runner?: QARunner;
  seed?: number;
  /** Continue the run in `dir` (after a kill): finished epochs, candidates and task results are read back. */
  resume?: boolean;
  /** What the run was started with, stored in hone.db (the CLI stores its resolved train.yaml). */
  config?: unknown;
  /** The run's records (cache, replay); by default its own, with the request cache off. */
  recording?: Recording;
  onEvent?: (e: { type: string; epoch: number; [k: string]: unknown }) => void;
}

/** What a harness copy takes: files, folders and links (never a FIFO, socket or device). */
const copyable = (path: string): boolean => {
  const s = lstatSync(path);
  return s.isFile() || s.isDirectory() || s.isSymbolicLink();
};

/** A patch-surface glob as a regular expression: `**` any path, `*` any name part, `?` one character of a name. */
const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*\*/g, "\u0000")
      .replace(/\*/g, "[^/]*")
      .replace(/\?/g, "[^/]")
      .replace(/\u0000/g, ".*")}$`,
  );

/**
 * `hone train`, after harness-training: each epoch measures HEAD on the panel, asks the estimator for one bounded
 * change, measures the candidate on the same panel, and yields a Loss; the caller runs loss.backward() and
 * optimizer.step(). Every candidate is a commit on refs/candidates/epoch-NN; promotions are fast-forwards. Every
 * measurement (per task), verdict and step is in hone.db, so a run killed at any point resumes (`resume: true`)
 * and reaches the decisions an uninterrupted run reaches.
 */
export class Trainer {
  readonly harness: HarnessParameter;
  readonly repo: HarnessRepo;
  current: Loss | undefined;
  private readonly measured = new Map<string, Measurement>();
  /** Per measured commit with tasks that failed for infrastructure reasons: how many, and the first one's error. */
  private readonly failures = new Map<string, string>();
  private readonly dir: string;
  private db: Db | undefined;
  private recording: Recording | undefined;
  private localRunner: QARunner | undefined;
  private runner: QARunner | undefined;
  private ownRecording = false;

  constructor(private readonly o: TrainerOptions) {
    this.dir = resolve(o.dir);
    const exists = existsSync(join(this.dir, "harnesses.git"));
    if (exists && !o.resume)
      throw new HoneError("usage", `${this.dir} already holds a training run; choose another directory, or resume it`);
    if (o.resume && !existsSync(join(this.dir, "hone.db")))
      throw new HoneError("usage", `${this.dir} has no hone.db to resume; start a training run there first`);
    mkdirSync(this.dir, { recursive: true });
    createRunDb(join(this.dir, "hone.db"), "train", o.config ?? this.defaultConfig());
    this.repo = HarnessRepo.forRun(join(this.dir, "harnesses.git"));
    const seedDir = join(this.dir, "candidates", "epoch-00");
    if (!this.repo.resolve("refs/candidates/epoch-00")) {
      // Checked before it is copied: a folder that is missing or no harness (train.yaml's harness: /) is refused
      // naming it, and only its files, folders and links are copied (a FIFO or device in it would block or fail).
      const seed = loadHarness(resolve(o.seedHarness)).dir;
      rmSync(seedDir, { recursive: true, force: true });
      cpSync(seed, seedDir, { recursive: true, filter: copyable });
    }
    loadHarness(seedDir);
    this.harness = { data: "", grad: undefined };
    this.recording = o.recording;
    this.runner = o.runner;
    o.optimizer.bind(this);
  }

  private defaultConfig() {
    return {
      seedHarness: resolve(this.o.seedHarness),
      panel: { benchmark: this.o.panel.benchmark, split: this.o.panel.split, tasks: this.o.panel.tasks.map((t) => t.id) },
      model: this.o.model,
      estimator: this.o.estimator.name,
      criterion: this.o.criterion.describe(),
      seed: this.o.seed ?? 0,
    };
  }

  /** Identifies the run's queue jobs: derived from the run's creation, so a resumed coordinator finds its finished jobs. */
  get runKey(): string {
    return runQueueKey(this.records(), "train");
  }

  /** Runs panel tasks on this runner from now on (BullMQ workers: built once the run's key is known). */
  useRunner(runner: QARunner): void {
    this.runner = runner;
  }

  private records(): Db {
    this.db ??= openDb(join(this.dir, "hone.db"), { replay: this.o.recording?.mode === "replay" });
    return this.db;
  }

  private dirOf(commit: string): string {
    const d = join(this.dir, "worktrees", commit.slice(0, 12));
    if (!isHarnessFolder(d)) this.repo.materialize(commit, d);
    return d;
  }

  private panelRunner(): QARunner {
    if (this.runner) return this.runner;
    if (!this.recording) {
      this.recording = new Recording(this.dir, { cache: { mode: "off" } });
      this.ownRecording = true;
    }
    this.localRunner ??= new LocalQARunner({
      model: this.o.model as ModelSettings,
      concurrency: this.o.concurrency ?? 8,
      recording: this.recording,
    });
    return this.localRunner;
  }

  /**
   * Measures a harness version on the panel (once per commit; tasks already recorded are not run again). A finished
   * re-measure of its crashed tasks (`remeasure`) stands in for their first results, in every later use too.
   */
  async measure(commit: string): Promise<Measurement> {
    const known = this.measured.get(commit);
    if (known) return known;
    const id = this.measurementId(commit);
    const rows = await this.measureTasks(commit, id, this.o.panel.tasks);
    const retry = measurement(this.records(), retryId(id));
    const again =
      retry?.status === "finished" ? new Map(taskResults(this.records(), retry.id).map((r) => [r.task_id, r])) : undefined;
    return this.remember(commit, again ? rows.map((r) => again.get(r.task_id) ?? r) : rows);
  }

  private measurementId(commit: string): string {
    return candidateIdOfCommit(this.records(), commit) ?? `commit-${commit.slice(0, 12)}`;
  }

  private remember(commit: string, rows: TaskResultRow[]): Measurement {
    const m = asMeasurement(commit, rows, {
      runDir: this.dir,
      textIsAction: Boolean(benchmark(this.o.panel.benchmark).conversation),
    });
    this.measured.set(commit, m);
    this.failures.delete(commit);
    const failed = rows.filter((r) => r.status === "infra");
    const first = failed[0];
    if (first)
      this.failures.set(commit, `${failed.length} of ${rows.length} failed; ${first.task_id}: ${first.error ?? "no error"}`);
    return m;
  }

  /**
   * One measurement (`id`) of a harness version on `tasks` (the panel's split, or `o.split`); `o.repeat` gives its
   * jobs ids apart from an earlier measurement's of the same tasks.
   */
  private async measureTasks(
    commit: string,
    id: string,
    tasks: QATask[],
    o: { repeat?: number; split?: string; round?: number } = {},
  ): Promise<TaskResultRow[]> {
    const db = this.records();
    const harnessDir = this.dirOf(commit);
    const harness = loadHarness(harnessDir);
    const candidate = this.measurementId(commit);
    const round =
      o.round ??
      (db.prepare("SELECT round FROM candidates WHERE id = ?").get(candidate) as { round: number } | undefined)?.round ??
      0;
    this.o.onEvent?.({ type: "measuring", epoch: round, candidate: id, ...(o.split ? { split: o.split } : {}) });
    return measurePanel(
      db,
      this.dir,
      "run",
      {
        id,
        round,
        candidateId: candidate,
        commit,
        contentHash: harness.contentHash,
        benchmark: this.o.panel.benchmark,
        split: o.split ?? this.o.panel.split ?? null,
        tasks: tasks.length,
        panel: tasks,
        harnessDir,
        seedOf: () => this.o.seed ?? 0,
        trajectoryDir: join("trajectories", id),
        repeat: o.repeat,
      },
      this.panelRunner(),
      this.recording,
    );
  }

  /**
   * After harness-training's trainer (one re-measure when a verdict is unmeasurable): the candidate's tasks that
   * failed for infrastructure reasons in its first measurement are measured once more, and their new results stand
   * in for the first. Undefined when there is nothing to re-measure (none of its own tasks crashed) or it was done.
   */
  private async remeasure(commit: string, epoch: number): Promise<Measurement | undefined> {
    const id = this.measurementId(commit);
    if (measurement(this.records(), retryId(id))?.status === "finished") return undefined;
    const first = taskResults(this.records(), id);
    const crashed = new Set(first.filter((r) => r.status === "infra").map((r) => r.task_id));
    if (crashed.size === 0) return undefined;
    const tasks = this.o.panel.tasks.filter((t) => crashed.has(t.id));
    this.o.onEvent?.({ type: "remeasure", epoch, candidate: id, tasks: tasks.length });
    const again = new Map((await this.measureTasks(commit, retryId(id), tasks, { repeat: 1 })).map((r) => [r.task_id, r]));
    return this.remember(
      commit,
      first.map((r) => again.get(r.task_id) ?? r),
    );
  }

  /**
   * HEAD measured with every task failed for infrastructure reasons (the model endpoint down, a wrong base_url):
   * no candidate can be judged against it, so the run stops before it proposes, with the first task's error.
   */
  private checkBaseline(baseline: Measurement): void {
    const tasks = Object.values(baseline.tasks);
    if (tasks.length === 0 || tasks.some((t) => t.status !== "infra")) return;
    throw new HoneError(
      "endpoint",
      `every task failed for infrastructure reasons when HEAD (${baseline.commit.slice(0, 12)}) was measured, so no candidate can be judged against it (${this.failures.get(baseline.commit)}); check the model (npx hone models check) and start a new run`,
    );
  }

  private checkSurface(candidateDir: string, incumbentDir: string): string | undefined {
    if (!this.o.patchSurface) return undefined;
    const allowed = this.o.patchSurface.map(glob);
    const outside = changedFiles(candidateDir, incumbentDir).filter((f) => !allowed.some((g) => g.test(f)));
    return outside.length ? `changes files outside the patch surface: ${outside.join(", ")}` : undefined;
  }

  /** The seed harness as epoch-00: committed once, measured as round 0. */
  private async seed(): Promise<void> {
    const db = this.records();
    let commit = this.repo.resolve("refs/candidates/epoch-00");
    if (!commit) {
      commit = await this.repo.commitDir(join(this.dir, "candidates", "epoch-00"), "epoch 00: seed harness", undefined, 0);
      this.repo.createRef("refs/candidates/epoch-00", commit);
    }
    this.repo.fastForwardMain(commit); // each time: a kill may have come between the seed's ref and main
    recordCandidate(db, {
      id: "epoch-00",
      round: 0,
      parentCommit: commit,
      commit,
      contentHash: loadHarness(join(this.dir, "candidates", "epoch-00")).contentHash,
      changed: [],
      status: "seed",
      gateError: null,
    });
    startRound(db, "run", 0, "measuring", commit, null);
    const m = await this.measure(commit);
    db.prepare("UPDATE rounds SET incumbent_score = ? WHERE run_id = 'run' AND round = 0").run(meanScore(m));
    db.prepare("UPDATE candidates SET score = ? WHERE id = 'epoch-00'").run(meanScore(m));
    if (roundState(db, "run", 0)?.status !== "finished") finishRound(db, "run", 0, null, false);
    this.harness.data = commit;
  }

  /** Proposes the epoch's candidate (or reads back the one recorded before a kill); a string says why it was skipped. */
  private async candidate(epoch: number, incumbentDir: string): Promise<{ commit: string } | { skip: string }> {
    const db = this.records();
    const recorded = epochCandidate(db, epoch);
    if (recorded?.commit_sha) return { commit: recorded.commit_sha };
    const candidateDir = join(this.dir, "candidates", epochId(epoch));
    rmSync(candidateDir, { recursive: true, force: true });
    cpSync(incumbentDir, candidateDir, { recursive: true });
    let skip: string | undefined;
    let summary: string | undefined;
    const responses: ChatResponse[] = [];
    // The proposer's calls are recorded with the epoch's candidate (or its skip), in one transaction: a kill before it
    // proposes again and counts the calls once.
    const withCalls = (record: () => void) =>
      db.transaction(() => {
        insertModelCalls(db, "run", "proposer", null, epoch, responseRows(responses));
        record();
      })();
    try {
      summary = await this.o.estimator.propose({
        epoch,
        incumbentDir,
        candidateDir,
        panelDescription: `${this.o.panel.tasks.length} ${this.o.panel.benchmark} questions`,
        onResponses: (rs) => responses.push(...rs),
      });
      if (summary === undefined) skip = "no_candidate: the estimator proposed nothing";
      else if (contentHash(candidateDir) === contentHash(incumbentDir)) skip = "no_candidate: the change is empty";
      else {
        const outside = this.checkSurface(candidateDir, incumbentDir);
        if (outside) skip = `invalid_candidate: ${outside}`;
        else loadHarness(candidateDir);
      }
    } catch (err) {
      if (err instanceof SpecError || err instanceof HoneError) skip = `invalid_candidate: ${err.message}`;
      else throw err;
    }
    if (skip) {
      this.repo.dropRef(`refs/candidates/${epochId(epoch)}`); // one a killed attempt left (replay reads the ref)
      withCalls(() => recordSkip(db, epoch, this.harness.data, skip as string));
      return { skip };
    }
    const ref = `refs/candidates/${epochId(epoch)}`;
    const commit = await this.repo.commitDir(candidateDir, `epoch ${epoch}: ${summary}`, this.harness.data, epoch);
    this.repo.replaceRef(ref, commit); // not recorded yet: a ref a killed attempt left is replaced
    withCalls(() =>
      recordCandidate(db, {
        id: epochId(epoch),
        round: epoch,
        parentCommit: this.harness.data,
        commit,
        contentHash: contentHash(candidateDir),
        changed: changedFiles(candidateDir, incumbentDir),
        status: "valid",
        gateError: null,
        summary,
      }),
    );
    return { commit };
  }

  /** On resume: HEAD after the finished epochs and the run of skipped epochs at their end. */
  private restore(): { next: number; skips: number } {
    let skips = 0;
    let next = 1;
    for (const e of finishedEpochs(this.records())) {
      if (e.moved && e.candidate) this.harness.data = e.candidate;
      skips = e.skipped ? skips + 1 : 0;
      next = e.epoch + 1;
    }
    return { next, skips };
  }

  async *epochs(n: number): AsyncGenerator<Loss> {
    try {
      if (!this.harness.data) await this.seed();
      const restored = this.restore();
      let skips = restored.skips;
      const skipped = (epoch: number, reason: string) => {
        this.o.onEvent?.({ type: "skip", epoch, reason });
        if (++skips >= 2)
          throw new HoneError("runFailed", `training stopped: two epochs in a row were skipped (last: ${reason})`);
      };
      if (skips >= 2) throw new HoneError("runFailed", "training stopped: two epochs in a row were skipped");
      for (let epoch = restored.next; epoch <= n; epoch++) {
        const emit = (type: string, extra: Record<string, unknown> = {}) => this.o.onEvent?.({ type, epoch, ...extra });
        const db = this.records();
        const baseline = await this.measure(this.harness.data);
        this.checkBaseline(baseline);
        startRound(db, "run", epoch, "proposing", this.harness.data, meanScore(baseline));
        const proposed = await this.candidate(epoch, this.dirOf(this.harness.data));
        if ("skip" in proposed) {
          skipped(epoch, proposed.skip);
          continue;
        }
        const candidate = proposed.commit;
        setRoundStatus(db, "run", epoch, "measuring");
        let measured = await this.measure(candidate);
        let verdict = this.o.criterion.compare(measured, baseline);
        if (verdict.decision === "unmeasurable") {
          const again = await this.remeasure(candidate, epoch);
          if (again) {
            measured = again;
            verdict = this.o.criterion.compare(measured, baseline);
          }
        }
        recordVerdict(db, epoch, epochId(epoch), verdict, this.o.criterion.describe(), meanScore(measured));
        if (verdict.decision === "unmeasurable") {
          finishRound(db, "run", epoch, null, false);
          const why = this.failures.get(candidate) ?? this.failures.get(baseline.commit);
          skipped(epoch, `measurement: ${verdict.reason}${why ? ` (${why})` : ""}`);
          continue;
        }
        skips = 0;
        setRoundStatus(db, "run", epoch, "deciding");
        const loss = new Loss(this, epoch, candidate, baseline, measured, verdict);
        this.current = loss;
        emit("loss", { candidate, decision: verdict.decision, reason: verdict.reason, loss: verdict.loss });
        yield loss;
        if (!loss.backwardCalled) throw new TrainingMisuse(`epoch ${epoch} ended without loss.backward()`);
        if (!loss.stepped) throw new TrainingMisuse(`epoch ${epoch} ended without optimizer.step()`);
        const promoted = this.harness.data === candidate;
        finishRound(db, "run", epoch, promoted ? meanScore(measured) : null, promoted);
        emit("step", { promoted, head: this.harness.data });
      }
      await this.finish();
    } finally {
      await this.localRunner?.close();
      this.localRunner = undefined;
      if (this.ownRecording) {
        this.recording?.close();
        this.recording = undefined;
        this.ownRecording = false;
      }
      this.db?.close();
      this.db = undefined;
    }
  }

  /** The end of the epochs: the held-out measurements, best/ (HEAD's package and meta.json), the run's summary. */
  private async finish(): Promise<void> {
    const db = this.records();
    const seed = this.repo.resolve("refs/candidates/epoch-00") as string;
    if (this.o.heldOut) {
      await this.measureHeldOut(seed, this.o.heldOut);
      if (this.harness.data !== seed) await this.measureHeldOut(this.harness.data, this.o.heldOut);
    }
    const summary = {
      head: this.harness.data,
      ...trainSummary(db),
      panel_sha256: panelHash(this.o.panel.tasks),
      held_out_sha256: this.o.heldOut ? panelHash(this.o.heldOut.tasks) : null,
      hone: HONE_VERSION,
    };
    writeBest(this.dir, this.repo, db, this.harness.data, summary.held_out);
    finishRun(db, summary);
  }

  /** One measurement of a commit on the held-out split (recorded; a resumed run reads it back). */
  private async measureHeldOut(commit: string, heldOut: { split: string; tasks: QATask[] }): Promise<void> {
    const round = Math.max(0, ...finishedEpochs(this.records()).map((e) => e.epoch)) + 1;
    await this.measureTasks(commit, heldOutId(this.measurementId(commit)), heldOut.tasks, { split: heldOut.split, round });
  }

  /** The run's epochs from its records (every decided epoch and the skipped ones). */
  summary() {
    const db = openDb(join(this.dir, "hone.db"), { readonly: true });
    try {
      return trainSummary(db);
    } finally {
      db.close();
    }
  }

  /** The package of the current incumbent. */
  headDir(): string {
    return this.dirOf(this.harness.data);
  }

  relative(path: string): string {
    return relative(this.dir, path);
  }
}

const meanScore = (m: Measurement): number | null => {
  const xs = Object.values(m.tasks).filter((t) => t.status !== "infra");
  return xs.length ? xs.reduce((a, t) => a + t.score, 0) / xs.length : null;
};
