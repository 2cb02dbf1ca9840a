// A train run from its configuration (train.yaml, or what hone.db stored): the panel, criterion, estimator and
// models, through the run's recording, so `hone train`, `hone train --resume` and `hone replay` build it one way.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import { loadHarness } from "../harness/package.ts";
import { isHarnessFolder } from "../harness/program.ts";
import {
  type Criterion,
  InvalidFirstAttempts,
  MeanWithConfidence,
  StepsUsed,
  StrictPareto,
  TokensUsed,
} from "../method/criteria.ts";
import { AgentCliEstimator, type Estimator, LLMEstimator, PatchQueue } from "../method/estimators.ts";
import type { ProposerTask } from "../method/proposer.ts";
import { keyedUrlResumeProblem } from "../secret-url.ts";
import { createRunDb, openDb, runRow } from "../store/db.ts";
import { HarnessRepo } from "../store/git.ts";
import { recordedHoneVersion } from "../store/receipts.ts";
import { loadSplit } from "../task/qa/benchmarks.ts";
import { refuseOtherVersion } from "./hone-version.ts";
import { DEFAULT_PROPOSER_HARNESS } from "./optimize-config.ts";
import type { QARunner } from "./qa-runner.ts";
import { Recording } from "./recording.ts";
import { takeRunDir } from "./run-writer.ts";
import { GreedyMonotonic, Trainer, type TrainerOptions } from "./train.ts";
import { heldOutSplitOf, type TrainConfig } from "./train-config.ts";
import { epochId } from "./train-records.ts";

/** train.yaml as a run stores it: paths absolute, patches as their text, so a resume or replay needs nothing else. */
export type StoredTrainConfig = Omit<TrainConfig, "out" | "$schema">;

export function storedConfig(c: TrainConfig & { base: string }): StoredTrainConfig {
  const { base, out: _o, $schema: _s, ...rest } = c;
  const estimator =
    rest.estimator.kind === "patch_queue"
      ? {
          ...rest.estimator,
          patches: rest.estimator.patches.map((p) => (p.includes("\n") ? p : readFileSync(resolve(base, p), "utf8"))),
        }
      : rest.estimator.kind === "llm" && rest.estimator.proposer_harness
        ? { ...rest.estimator, proposer_harness: resolve(base, rest.estimator.proposer_harness) }
        : rest.estimator;
  return {
    ...rest,
    harness: resolve(base, rest.harness),
    panel: { ...rest.panel, data_dir: rest.panel.data_dir ? resolve(base, rest.panel.data_dir) : undefined },
    estimator,
  };
}

export const toModel = (m: { model: string; base_url?: string; dialect?: "vllm" | "openai"; api_key_env?: string }) => ({
  model: m.model,
  baseUrl: m.base_url,
  dialect: m.dialect,
  apiKeyEnv: m.api_key_env,
});

function criterionOf(c: StoredTrainConfig): Criterion {
  if (c.criterion.kind === "strict_pareto") {
    const metrics = { steps: StepsUsed, tokens: TokensUsed, invalid_first_attempts: InvalidFirstAttempts };
    return new StrictPareto(c.criterion.secondary.map((s) => metrics[s]));
  }
  return new MeanWithConfidence({ confidence: c.criterion.confidence, resamples: c.criterion.resamples, seed: c.seed });
}

/** In a replay of an agent_cli run: each epoch's candidate is the recorded one (an external command is not replayed). */
class RecordedCandidates implements Estimator {
  readonly name = "recorded";
  constructor(private readonly source: string) {}
  async propose(ctx: { epoch: number; candidateDir: string }): Promise<string | undefined> {
    const repo = new HarnessRepo(join(this.source, "harnesses.git"));
    const commit = repo.resolve(`refs/candidates/${epochId(ctx.epoch)}`);
    if (!commit) return undefined;
    repo.materialize(commit, ctx.candidateDir);
    const db = openDb(join(this.source, "hone.db"), { readonly: true });
    const spec = (
      db.prepare("SELECT spec FROM candidates WHERE id = ?").get(epochId(ctx.epoch)) as { spec: string | null } | undefined
    )?.spec;
    db.close();
    return spec ? (JSON.parse(spec) as { summary?: string }).summary : "recorded candidate";
  }
}

export interface TrainRun {
  /** The run's folder (absolute): `out`, or the first free runs/train-<time>[-N] without one. */
  out: string;
  trainer: Trainer;
  optimizer: GreedyMonotonic;
  config: StoredTrainConfig;
  tasks: number;
  criterion: Criterion;
  close(): Promise<void>;
}

/**
 * Opens a train run in `out`: a new one from `config`, the stored one with `resume`, or a replay of `replayOf`
 * (its stored configuration, every model call and candidate served from its records, no endpoint).
 */
export async function openTrainRun(o: {
  config?: TrainConfig & { base: string };
  /** The run's folder; a new run without one takes the first free runs/train-<time>[-N]. */
  out?: string;
  resume?: boolean;
  replayOf?: string;
  queue?: string;
  onEvent?: TrainerOptions["onEvent"];
  /** Called once the run's folder is held, with what removes everything written there (a new run's folder itself). */
  onHeld?: (dir: string, abandon: () => void) => void;
}): Promise<TrainRun> {
  if (o.resume && !o.out) throw new HoneError("usage", "--resume needs the run directory");
  const source = o.resume ? resolve(o.out as string) : o.replayOf;
  let c: StoredTrainConfig;
  if (source) {
    const db = openDb(join(resolve(source), "hone.db"), { readonly: true });
    const row = runRow(db);
    const recorded = recordedHoneVersion(db);
    db.close();
    if (row?.kind !== "train")
      throw new HoneError("usage", `${source} is not a train run (its hone.db holds ${row?.kind ?? "no run"})`);
    if (o.resume) refuseOtherVersion(resolve(source), "resume", recorded);
    c = JSON.parse(row.config) as StoredTrainConfig;
    if (o.resume) refuseKeyedUrls(resolve(source), c);
  } else if (o.config) c = storedConfig(o.config);
  else throw new HoneError("usage", "give --config train.yaml, or --resume a run directory");
  const held = takeRunDir({
    dir: o.out,
    prefix: "train",
    resume: Boolean(o.resume),
    onNotice: (text) => o.onEvent?.({ type: "notice", epoch: 0, text }),
  });
  try {
    o.onHeld?.(held.dir, held.abandon);
    const run = await buildTrainRun(o, held.dir, c);
    return {
      ...run,
      out: held.dir,
      close: async () => {
        try {
          await run.close();
        } finally {
          held.lock.release();
        }
      },
    };
  } catch (err) {
    held.abandon(); // a new run that could not be set up leaves no folder behind
    throw err;
  }
}

/** The train run in `out` (held by this process) from its stored configuration `c`. */
async function buildTrainRun(
  o: Parameters<typeof openTrainRun>[0],
  out: string,
  c: StoredTrainConfig,
): Promise<Omit<TrainRun, "out">> {
  createRunDb(join(out, "hone.db"), "train", c);
  const replay = Boolean(o.replayOf);
  const recording = new Recording(out, { cache: { mode: replay ? "replay" : "off" }, replayOf: o.replayOf });
  const closers: (() => Promise<void> | void)[] = [() => recording.close()];
  const tasks = await loadSplit(c.panel.benchmark, c.panel.split, {
    dir: c.panel.data_dir,
    seed: c.seed,
    limit: c.panel.limit,
  });
  // Loaded with the panel, so a held-out split the data lacks is refused before any epoch runs.
  const heldOutSplit = c.held_out && heldOutSplitOf(c.panel.benchmark, c.panel.split, c.held_out.split);
  const heldOut = c.held_out &&
    heldOutSplit && {
      split: heldOutSplit,
      tasks: await loadSplit(c.panel.benchmark, heldOutSplit, {
        dir: c.panel.data_dir,
        seed: c.seed,
        limit: c.held_out.limit ?? c.panel.limit,
      }),
    };
  let estimator: Estimator;
  if (c.estimator.kind === "patch_queue") estimator = new PatchQueue(c.estimator.patches);
  else if (c.estimator.kind === "agent_cli")
    estimator = replay
      ? new RecordedCandidates(resolve(o.replayOf as string))
      : new AgentCliEstimator(c.estimator.command, c.estimator.timeout);
  else {
    const proposer = await recording.model(toModel(c.estimator.proposer));
    closers.push(proposer.close);
    const panelTask: ProposerTask = {
      kind: "qa",
      id: `${c.panel.benchmark}-panel`,
      description: `Answer ${c.panel.benchmark} questions correctly (${c.panel.limit} from the ${c.panel.split} split); the answers are scored by the benchmark's official rule.`,
      metric: "accuracy",
      direction: "maximize",
      measuredBy: "Each harness answers every question of the panel once.",
    };
    estimator = new LLMEstimator(
      proposer.model,
      loadHarness(c.estimator.proposer_harness ?? DEFAULT_PROPOSER_HARNESS),
      (d) => loadHarness(d),
      panelTask,
      c.seed,
    );
  }
  const criterion = criterionOf(c);
  const optimizer = new GreedyMonotonic();
  // A replay starts from the seed harness as the run kept it (its epoch-00), not the folder the run was started
  // from, which may have changed or gone since (or be on another machine): as optimize's replay does.
  const kept = o.replayOf ? join(resolve(o.replayOf), "candidates", "epoch-00") : undefined;
  const trainer = new Trainer({
    dir: out,
    seedHarness: kept && isHarnessFolder(kept) ? kept : c.harness,
    panel: { benchmark: c.panel.benchmark, split: c.panel.split, tasks },
    heldOut,
    model: toModel(c.model),
    estimator,
    criterion,
    optimizer,
    patchSurface: c.patch_surface,
    concurrency: c.concurrency,
    seed: c.seed,
    resume: o.resume,
    config: c,
    recording,
    onEvent: o.onEvent,
  });
  if (o.queue && !replay) {
    const { BullmqQARunner } = await import("./distributed/bullmq.ts");
    const runner: QARunner = new BullmqQARunner({ url: o.queue, runKey: trainer.runKey, executor: toModel(c.model) });
    trainer.useRunner(runner);
    closers.push(() => runner.close());
  }
  return {
    trainer,
    optimizer,
    config: c,
    tasks: tasks.length,
    criterion,
    close: async () => {
      for (const cl of closers.reverse()) await cl();
    },
  };
}

/** A train run started with a key in an endpoint's URL cannot be resumed: the key was never stored (secret-url.ts). */
function refuseKeyedUrls(runDir: string, c: StoredTrainConfig): void {
  const proposer = c.estimator.kind === "llm" ? c.estimator.proposer.base_url : undefined;
  for (const [role, url, field] of [
    ["model", c.model.base_url, "model.api_key_env"],
    ["proposer", proposer, "estimator.proposer.api_key_env"],
  ] as const) {
    const problem = keyedUrlResumeProblem(runDir, role, url, `${field} in train.yaml`);
    if (problem) throw new HoneError("usage", problem);
  }
}
