import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stringify as toYaml } from "yaml";
import { HoneError } from "../errors.ts";
import { type LoraSettings, resumeAdapter } from "../method/lora.ts";
import type { CacheMode } from "../model/cache.ts";
import type { ModelSettings } from "../model/resolve.ts";
import { checkHarness } from "../sandbox/check.ts";
import { candidateOfCommit, lastFinishedRound, slotSummaries } from "../store/candidates.ts";
import { type Db, finishRun, openDb, roundRows, runRow } from "../store/db.ts";
import { resolveTask } from "../task/builtin.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { SlurmSettings } from "./distributed/slurm.ts";
import { type Incumbent, open, type RunContext } from "./optimize-context.ts";
import type { RunNoise } from "./optimize-noise.ts";
import { roundZero, runRound } from "./optimize-rounds.ts";
import { DEFAULT_HARNESS } from "./run.ts";
import type { Runner } from "./runner.ts";

export const DEFAULT_PROPOSER_HARNESS = resolve(DEFAULT_HARNESS, "..", "proposer");

export interface OptimizeSettings {
  task: string;
  tasksDir?: string;
  seedHarness: string;
  proposerHarness: string;
  executor: Partial<ModelSettings> & { model: string };
  proposer: Partial<ModelSettings> & { model: string };
  rounds: number;
  /** The method that proposes and keeps candidates (hone methods lists them); default harnessttt. */
  method?: string;
  /** The method's parameters, validated by its own schema (defaults for what is not given). */
  methodParams?: Record<string, unknown>;
  proposalsPerRound: number;
  maxEvals: number;
  concurrency: number;
  paired: boolean;
  seed: number;
  warmPool: boolean;
  timeLimitSec?: number;
  learning: { mode: "context" | "lora"; digestTokens: number; lora?: LoraSettings };
  /** Request cache: off, read-write (default) or replay; `dir` holds the shared cache (default ~/.cache/hone). */
  cache?: { mode: CacheMode; dir?: string };
  /** For `hone replay`: the recorded run whose model calls and evaluations this run reproduces. */
  replayOf?: string;
  /** Run rollouts on BullMQ workers through this Redis URL (`hone worker` on each machine) instead of locally. */
  queue?: string;
  /** Run each rollout as a Slurm job (sbatch) on a filesystem shared with the run directory. */
  slurm?: SlurmSettings;
  /**
   * How many times round 0 evaluates the seed program to measure the evaluator's noise, and how many times each
   * comparison re-evaluates a candidate's best program and the incumbent where it is stochastic (default 3; 1
   * disables noise measurement: single scores, strictly better).
   */
  noiseRepeats?: number;
}

export type OptimizeEvent =
  | { type: "start"; runDir: string; resumed: boolean; task: string; rounds: number }
  | { type: "round_start"; round: number; incumbentScore: number | null }
  | { type: "proposals"; round: number; valid: number; repaired: number; invalid: number }
  | { type: "rollout_event"; round: number; job: string; event: Record<string, unknown> }
  | { type: "rollout_done"; round: number; job: string; score: number | null; error?: string }
  | {
      type: "round_end";
      round: number;
      incumbentScore: number | null;
      bestScore: number | null;
      moved: boolean;
      /** Per slot; null where the candidate was unmeasurable (a failed or mismatched paired control). */
      rewards: (number | null)[];
    }
  | { type: "noise"; noise: RunNoise }
  | { type: "notice"; text: string };

export interface RoundSummary {
  round: number;
  incumbentScore: number | null;
  bestScore: number | null;
  moved: boolean;
  candidates: {
    slot: number;
    status: string;
    score: number | null;
    reward: number | null;
    advantage: number | null;
    changed: string[];
  }[];
}

export interface OptimizeResult {
  runDir: string;
  runId: string;
  bestHarnessPath: string;
  bestScore: number | null;
  startScore: number | null;
  /** The evaluator's noise as measured in round 0 (or declared by the task). */
  noise: RunNoise | undefined;
  rounds: RoundSummary[];
  writeBestProgram(path: string): void;
}

export type RunnerFactory = (o: { task: DiscoveryTask; settings: OptimizeSettings; runDir: string }) => Runner | undefined;

export interface OptimizeOptions {
  outDir: string;
  resume?: boolean;
  /** With resume: options that may change for the rest of the run (everything else comes from hone.db). */
  overrides?: { rounds?: number; concurrency?: number };
  onEvent?: (e: OptimizeEvent) => void;
  runner?: RunnerFactory;
}

/**
 * `hone optimize`: learn the harness at test time. Round 0 rolls out the seed harness; each later round the
 * proposer writes K specs, each is compiled, gated and rolled out from the incumbent program under the same
 * budget; rewards and advantages are recorded; the best program and the harness that found it carry into the next
 * round only when it is a different program whose score clears the incumbent's beyond the measured noise
 * (optimize-ratchet.ts). Every candidate is a commit; every measurement and decision is a row in hone.db.
 */
export async function optimize(settingsIn: OptimizeSettings, o: OptimizeOptions): Promise<OptimizeResult> {
  const runDir = resolve(o.outDir);
  const emit = o.onEvent ?? (() => {});
  let settings = settingsIn;
  if (o.resume) {
    if (!existsSync(join(runDir, "hone.db")))
      throw new HoneError("usage", `${runDir} has no hone.db to resume; start a run with --out ${o.outDir}`);
    const db = openDb(join(runDir, "hone.db"));
    const row = runRow(db);
    db.close();
    if (!row) throw new HoneError("usage", `${runDir}: the run was never started; remove the folder and start again`);
    if (row.kind !== "optimize")
      throw new HoneError("usage", `${runDir} is a ${row.kind} run, not an optimize run; resume it with hone ${row.kind}`);
    settings = {
      ...JSON.parse(row.config),
      ...Object.fromEntries(Object.entries(o.overrides ?? {}).filter(([, v]) => v !== undefined)),
    };
  } else if (existsSync(runDir) && readdirSync(runDir).some((f) => !f.startsWith("hone.db.new"))) {
    throw new HoneError("usage", `${runDir} already exists and is not empty; choose another --out, or --resume it`);
  }
  // Check the seed package (and the task) before creating anything.
  const task = await resolveTask(settings.task, settings.tasksDir);
  const seedReport = await checkHarness(settings.seedHarness, { task });
  if (!seedReport.ok)
    throw new HoneError(
      "badHarness",
      `${settings.seedHarness}: the seed harness is refused:\n  ${seedReport.problems.map((p) => p.message).join("\n  ")}`,
    );
  mkdirSync(runDir, { recursive: true });
  const ctx = await open(settings, runDir, Boolean(o.resume), emit, o.runner);
  try {
    let incumbent = await roundZero(ctx);
    const lora = settings.learning.mode === "lora" ? settings.learning.lora : undefined;
    if (o.resume && lora) {
      const adapter = await resumeAdapter(runDir, lora, lastFinishedRound(ctx.db), settings.proposer);
      if (adapter) ctx.proposer = await ctx.recording.model({ ...settings.proposer, model: adapter });
    }
    for (let round = 1; round <= settings.rounds; round++) incumbent = await runRound(ctx, round, incumbent);
    return finish(ctx, incumbent);
  } finally {
    await ctx.close();
  }
}

function finish(ctx: RunContext, inc: Incumbent): OptimizeResult {
  const { db, runId, repo, task } = ctx;
  const bestDir = join(ctx.dir, "best");
  rmSync(bestDir, { recursive: true, force: true });
  repo.materialize(inc.commit, bestDir);
  const cand = candidateOfCommit(db, inc.commit);
  writeFileSync(
    join(bestDir, "spec.yaml"),
    cand?.spec ? toYaml(JSON.parse(cand.spec)) : "# the seed harness: no spec applied\n{}\n",
  );
  writeFileSync(
    join(bestDir, "meta.json"),
    `${JSON.stringify({ candidate: cand?.id ?? "r00-seed", round: cand?.round ?? 0, commit: inc.commit, parent: cand?.round ? cand.parent_commit : null, changed: JSON.parse(cand?.changed ?? "[]"), score: inc.score ?? null, metric: task.metric, direction: task.direction }, null, 2)}\n`,
  );
  const programFile = join(ctx.dir, `best_program${task.programExtension}`);
  writeFileSync(programFile, inc.program);
  const rounds = summarize(db, runId);
  const startScore = rounds[0]?.incumbentScore ?? null;
  finishRun(db, { best_score: inc.score ?? null, best_commit: inc.commit, start_score: startScore, noise: ctx.noise ?? null });
  return {
    runDir: ctx.dir,
    runId,
    bestHarnessPath: bestDir,
    bestScore: inc.score ?? null,
    startScore,
    noise: ctx.noise,
    rounds,
    writeBestProgram: (path: string) => writeFileSync(path, inc.program),
  };
}

export function summarize(db: Db, runId: string): RoundSummary[] {
  return roundRows(db, runId).map((r) => ({
    round: r.round,
    incumbentScore: r.incumbent_score,
    bestScore: r.best_score,
    moved: r.moved === 1,
    candidates: slotSummaries(db, runId, r.round).map((c) => ({ ...c, changed: JSON.parse(c.changed ?? "[]") as string[] })),
  }));
}
