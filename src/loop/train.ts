import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import { SpecError } from "../harness/compile.ts";
import { contentHash, listFiles } from "../harness/files.ts";
import { loadHarness } from "../harness/package.ts";
import type { Criterion, Measurement, Verdict } from "../method/criteria.ts";
import type { Estimator } from "../method/estimators.ts";
import type { ModelSettings } from "../model/resolve.ts";
import { HarnessRepo } from "../store/git.ts";
import type { QATask } from "../task/qa/benchmarks.ts";
import { LocalQARunner, type QAJob, type QARunner } from "./qa-runner.ts";

/** The harness parameter: `data` is the incumbent commit (HEAD), `grad` the verdict waiting for step(). */
export interface HarnessParameter {
  data: string;
  grad: Loss | undefined;
}

export class TrainingMisuse extends HoneError {
  constructor(message: string) {
    super("usage", message);
  }
}

/** One epoch's result. backward() records the verdict on the harness parameter; nothing else. */
export class Loss {
  backwardCalled = false;
  stepped = false;
  constructor(
    readonly trainer: Trainer,
    readonly epoch: number,
    readonly candidate: string,
    readonly baseline: Measurement,
    readonly measured: Measurement,
    readonly verdict: Verdict,
  ) {}
  get value(): number {
    return this.verdict.loss;
  }
  backward(): void {
    if (this.backwardCalled) throw new TrainingMisuse(`loss.backward() was called twice in epoch ${this.epoch}`);
    if (this.trainer.current !== this)
      throw new TrainingMisuse(
        `loss.backward() on a stale loss (epoch ${this.epoch}; the trainer is at epoch ${this.trainer.current?.epoch ?? "-"})`,
      );
    this.backwardCalled = true;
    this.trainer.harness.grad = this;
  }
  /** Valid once step() ran. */
  get promoted(): boolean {
    if (!this.stepped) throw new TrainingMisuse("loss.promoted is known only after optimizer.step()");
    return this.trainer.harness.data === this.candidate;
  }
}

/** Applies a verdict: fast-forward to the candidate when it promotes, otherwise stay. Nothing else. */
export class GreedyMonotonic {
  private trainer: Trainer | undefined;
  bind(trainer: Trainer): void {
    this.trainer = trainer;
  }
  step(): void {
    const t = this.trainer;
    if (!t) throw new TrainingMisuse("the optimizer is not bound to a trainer; pass it to new Trainer({ optimizer })");
    const grad = t.harness.grad;
    if (!grad) throw new TrainingMisuse("optimizer.step() without loss.backward(): there is no verdict to apply");
    if (grad.stepped) throw new TrainingMisuse(`optimizer.step() was called twice in epoch ${grad.epoch}`);
    if (grad !== t.current) throw new TrainingMisuse("optimizer.step() with a stale verdict");
    if (grad.verdict.decision === "promote" && grad.verdict.loss < 0) {
      if (!t.repo.fastForwardMain(grad.candidate, t.harness.data))
        throw new Error(`main cannot fast-forward to ${grad.candidate}`);
      t.harness.data = grad.candidate;
    }
    grad.stepped = true;
    t.harness.grad = undefined;
  }
}

export interface TrainerOptions {
  /** Run directory: harnesses.git, candidates/ and measurements live here. */
  dir: string;
  seedHarness: string;
  panel: { benchmark: string; tasks: QATask[] };
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
  onEvent?: (e: { type: string; epoch: number; [k: string]: unknown }) => void;
}

const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*\*/g, "\u0000")
      .replace(/\*/g, "[^/]*")
      .replace(/\u0000/g, ".*")}$`,
  );

/**
 * `hone train`, after harness-training: each epoch measures HEAD on the panel, asks the estimator for one bounded
 * change, measures the candidate on the same panel, and yields a Loss; the caller runs loss.backward() and
 * optimizer.step(). Every candidate is a commit on refs/candidates/epoch-NN; promotions are fast-forwards.
 */
export class Trainer {
  readonly harness: HarnessParameter;
  readonly repo: HarnessRepo;
  current: Loss | undefined;
  private readonly measured = new Map<string, Measurement>();
  private readonly dir: string;

  constructor(private readonly o: TrainerOptions) {
    this.dir = resolve(o.dir);
    if (existsSync(join(this.dir, "harnesses.git")))
      throw new HoneError("usage", `${this.dir} already holds a training run; choose another directory`);
    mkdirSync(this.dir, { recursive: true });
    this.repo = HarnessRepo.init(join(this.dir, "harnesses.git"));
    const seedDir = join(this.dir, "candidates", "epoch-00");
    cpSync(resolve(o.seedHarness), seedDir, { recursive: true });
    loadHarness(seedDir);
    this.harness = { data: "", grad: undefined };
    o.optimizer.bind(this);
  }

  private dirOf(commit: string): string {
    const d = join(this.dir, "worktrees", commit.slice(0, 12));
    if (!existsSync(join(d, "agent.yaml"))) this.repo.materialize(commit, d);
    return d;
  }

  /** Measures a harness version on the panel (once per commit). */
  async measure(commit: string): Promise<Measurement> {
    const known = this.measured.get(commit);
    if (known) return known;
    const harnessDir = this.dirOf(commit);
    loadHarness(harnessDir);
    const jobs: QAJob[] = this.o.panel.tasks.map((task) => ({
      id: task.id,
      harnessDir,
      benchmark: this.o.panel.benchmark,
      task,
      seed: this.o.seed ?? 0,
    }));
    const runner =
      this.o.runner ?? new LocalQARunner({ model: this.o.model as ModelSettings, concurrency: this.o.concurrency ?? 8 });
    const tasks: Measurement["tasks"] = {};
    try {
      for await (const { id, result: r } of runner.run(jobs))
        tasks[id] = {
          status: r.status === "failed" ? "infra" : r.correct ? "solved" : "unsolved",
          score: r.score,
          steps: r.modelCalls,
          tokens: r.tokens,
        };
    } finally {
      if (!this.o.runner) await runner.close();
    }
    const m = { commit, tasks };
    this.measured.set(commit, m);
    return m;
  }

  private checkSurface(candidateDir: string, incumbentDir: string): string | undefined {
    if (!this.o.patchSurface) return undefined;
    const allowed = this.o.patchSurface.map(glob);
    const before = new Map(listFiles(incumbentDir).map((f) => [f, contentHash(incumbentDir, [f])]));
    const after = new Map(listFiles(candidateDir).map((f) => [f, contentHash(candidateDir, [f])]));
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((f) => before.get(f) !== after.get(f));
    const outside = changed.filter((f) => !allowed.some((g) => g.test(f)));
    return outside.length ? `changes files outside the patch surface: ${outside.join(", ")}` : undefined;
  }

  async *epochs(n: number): AsyncGenerator<Loss> {
    if (!this.harness.data) {
      this.harness.data = await this.repo.commitDir(
        join(this.dir, "candidates", "epoch-00"),
        "epoch 00: seed harness",
        undefined,
        0,
      );
      this.repo.createRef("refs/candidates/epoch-00", this.harness.data);
      this.repo.fastForwardMain(this.harness.data);
    }
    let skips = 0;
    for (let epoch = 1; epoch <= n; epoch++) {
      const emit = (type: string, extra: Record<string, unknown> = {}) => this.o.onEvent?.({ type, epoch, ...extra });
      const baseline = await this.measure(this.harness.data);
      const incumbentDir = this.dirOf(this.harness.data);
      const candidateDir = join(this.dir, "candidates", `epoch-${String(epoch).padStart(2, "0")}`);
      rmSync(candidateDir, { recursive: true, force: true });
      cpSync(incumbentDir, candidateDir, { recursive: true });
      let skip: string | undefined;
      let summary: string | undefined;
      try {
        summary = await this.o.estimator.propose({
          epoch,
          incumbentDir,
          candidateDir,
          panelDescription: `${this.o.panel.tasks.length} ${this.o.panel.benchmark} questions`,
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
        emit("skip", { reason: skip });
        if (++skips >= 2) throw new HoneError("runFailed", `training stopped: two epochs in a row were skipped (last: ${skip})`);
        continue;
      }
      const candidate = await this.repo.commitDir(candidateDir, `epoch ${epoch}: ${summary}`, this.harness.data, epoch);
      this.repo.createRef(`refs/candidates/epoch-${String(epoch).padStart(2, "0")}`, candidate);
      const measured = await this.measure(candidate);
      const verdict = this.o.criterion.compare(measured, baseline);
      if (verdict.decision === "unmeasurable") {
        emit("skip", { reason: `measurement: ${verdict.reason}` });
        if (++skips >= 2)
          throw new HoneError("runFailed", `training stopped: two epochs in a row were skipped (last: ${verdict.reason})`);
        continue;
      }
      skips = 0;
      const loss = new Loss(this, epoch, candidate, baseline, measured, verdict);
      this.current = loss;
      emit("loss", { candidate, decision: verdict.decision, reason: verdict.reason, loss: verdict.loss });
      yield loss;
      if (!loss.backwardCalled) throw new TrainingMisuse(`epoch ${epoch} ended without loss.backward()`);
      if (!loss.stepped) throw new TrainingMisuse(`epoch ${epoch} ended without optimizer.step()`);
      emit("step", { promoted: this.harness.data === candidate, head: this.harness.data });
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
