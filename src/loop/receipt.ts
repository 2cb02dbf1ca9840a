import { existsSync } from "node:fs";
import { join } from "node:path";
import { HoneError } from "../errors.ts";
import { describeNoise } from "../measure/noise.ts";
import { oneLine } from "../printable.ts";
import { type Db, openDb, type RunRow, runRow } from "../store/db.ts";
import { HarnessRepo } from "../store/git.ts";
import { loadNoise, noiseCounts } from "../store/noise.ts";
import { type CallRow, callsOfRole, candidateStatuses, qaCounts, rolloutSummaries } from "../store/receipts.ts";

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/**
 * The p-quantile of sorted latencies, interpolated linearly between the two nearest (numpy.percentile's default), so
 * that a receipt's p50 is the median a reader recomputes from hone.db: the middle two's mean for an even count.
 */
function q(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const at = p * (sorted.length - 1);
  const lo = Math.floor(at);
  const a = sorted[lo] as number;
  const b = sorted[Math.min(sorted.length - 1, lo + 1)] as number;
  return a + (b - a) * (at - lo);
}

function noiseBreakdown(db: Db) {
  const rows = noiseCounts(db);
  return {
    total: rows.reduce((a, r) => a + r.evaluations, 0),
    invalid: rows.reduce((a, r) => a + r.invalid, 0),
    seconds: Math.round(rows.reduce((a, r) => a + r.seconds, 0) * 10) / 10,
    by_purpose: Object.fromEntries(rows.map((r) => [r.purpose, r.evaluations])),
  };
}

function noiseOf(db: Db) {
  const n = loadNoise(db, "run");
  return n ? { ...n, stochastic: n.stochastic === 1 } : null;
}

type ModelConfig = { model?: string; baseUrl?: string; dialect?: string; apiKeyEnv?: string };
// biome-ignore lint/suspicious/noExplicitAny: four run kinds store four shapes of configuration; read loosely, by kind.
type Config = Record<string, any>;

/** Each run kind names its models its own way; the receipt names them by role. */
function modelsOf(kind: RunRow["kind"], c: Config): Record<"executor" | "proposer", ModelConfig | undefined> {
  const fromYaml = (m: { model: string; base_url?: string; dialect?: string; api_key_env?: string } | undefined) =>
    m ? { model: m.model, baseUrl: m.base_url, dialect: m.dialect, apiKeyEnv: m.api_key_env } : undefined;
  if (kind === "optimize") return { executor: c.executor, proposer: c.proposer };
  if (kind === "train") return { executor: fromYaml(c.model), proposer: fromYaml(c.estimator?.proposer) };
  return { executor: { model: c.model, baseUrl: c.baseUrl, dialect: c.dialect, apiKeyEnv: c.apiKeyEnv }, proposer: undefined };
}

function role(name: string, m: ModelConfig | undefined, calls: CallRow[]) {
  const live = calls
    .filter((c) => !c.cached)
    .map((c) => c.latency_ms)
    .sort((a, b) => a - b);
  const faults: Record<string, number> = {};
  for (const c of calls)
    for (const f of JSON.parse(c.faults ?? "[]") as { kind: string }[]) faults[f.kind] = (faults[f.kind] ?? 0) + 1;
  return {
    role: name,
    model: m?.model ?? null,
    endpoint: m?.model === "offline" && !m?.baseUrl ? "offline (in-process)" : (m?.baseUrl ?? null),
    dialect: m?.dialect ?? "vllm",
    api_key_env: !m || m.model === "offline" ? null : (m.apiKeyEnv ?? "OPENAI_API_KEY"),
    calls: calls.length,
    cache_hits: calls.filter((c) => c.cached).length,
    prompt_tokens: calls.reduce((a, c) => a + c.prompt_tokens, 0),
    completion_tokens: calls.reduce((a, c) => a + c.completion_tokens, 0),
    latency_ms_p50: q(live, 0.5),
    latency_ms_p95: q(live, 0.95),
    retried_faults: faults,
  };
}

/** The settings a run of each kind was made with (what its numbers depend on). */
function settingsOf(kind: RunRow["kind"], c: Config) {
  // A QA search has no evaluator budget and no pairing; its noise repeats decide its keep rule (qa-ratchet.ts).
  const qa = kind === "optimize" && isQaBenchmark(c.benchmark);
  if (kind === "optimize")
    return {
      rounds: c.rounds,
      proposals: c.proposals ?? c.proposalsPerRound,
      max_evals: qa ? undefined : c.maxEvals,
      concurrency: c.concurrency,
      paired: qa ? undefined : c.paired,
      noise_repeats: c.noiseRepeats,
      seed: c.seed,
      cache: c.cache?.mode ?? "read-write",
      learning: c.learning?.mode,
      replay_of: c.replayOf ?? null,
    };
  if (kind === "train")
    return {
      benchmark: c.panel?.benchmark,
      split: c.panel?.split,
      panel: c.panel?.limit,
      estimator: c.estimator?.kind,
      criterion: c.criterion?.kind,
      patch_surface: c.patch_surface?.join(" ") ?? null,
      concurrency: c.concurrency,
      seed: c.seed,
    };
  if (kind === "eval")
    return {
      benchmark: c.benchmark,
      split: c.split,
      limit: c.limit ?? null,
      concurrency: c.concurrency ?? 8,
      seed: c.seed ?? 0,
      cache: c.cache?.mode ?? "off",
      replay_of: c.replayOf ?? null,
    };
  return { max_evals: c.maxEvals, seed: c.seed ?? 0, cache: c.cache?.mode ?? "off", replay_of: c.replayOf ?? null };
}

/** An optimize run's benchmark setting, when it searched a QA benchmark (its id and the train and validation sizes). */
function isQaBenchmark(b: unknown): b is { id: string; train: number; validation: number } {
  return typeof b === "object" && b !== null && typeof (b as { id?: unknown }).id === "string";
}

/** A string field of a run's summary (null while it runs, or for a run made before hone recorded it). */
function summaryField(run: RunRow, key: string): string | null {
  const v = run.summary ? (JSON.parse(run.summary) as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" ? v : null;
}

/** What a run's numbers rest on, read from its hone.db and git repository; every run kind has one. */
export function runReceipt(dir: string) {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  try {
    const run = runRow(db);
    if (!run) throw new HoneError("usage", `${join(dir, "hone.db")} holds no run (its runs table has no row)`);
    const config = JSON.parse(run.config) as Config;
    const models = modelsOf(run.kind, config);
    const roles = (["executor", "proposer"] as const)
      .filter((r) => models[r] || callsOfRole(db, r).length > 0)
      .map((r) => role(r, models[r], callsOfRole(db, r)));
    const rollouts = rolloutSummaries(db);
    const candidates = candidateStatuses(db);
    const qa = qaCounts(db);
    const identity = rollouts.find((r) => r.identity)?.identity;
    const evaluators = evaluatorsOf(rollouts);
    const repo = existsSync(join(dir, "harnesses.git")) ? new HarnessRepo(join(dir, "harnesses.git")) : undefined;
    const seed = candidates.find((c) => ["r00-seed", "epoch-00", "harness"].includes(c.id));
    const incumbent = repo?.resolve("refs/heads/main") ?? null;
    return {
      run: {
        kind: run.kind,
        status: run.status,
        started: run.created_at,
        finished: run.finished_at,
        summary: run.summary ? JSON.parse(run.summary) : null,
      },
      task: identity
        ? JSON.parse(identity).task
        : {
            id:
              config.task ??
              (typeof config.benchmark === "object" && config.benchmark
                ? `${config.benchmark.id} (train ${config.benchmark.train}, validation ${config.benchmark.validation})`
                : undefined) ??
              (config.panel ? `${config.panel.benchmark}/${config.panel.split}` : `${config.benchmark}/${config.split}`),
            /** A QA run's questions (ids, questions, golds) as one sha256, from its summary once it finished. */
            panel_sha256: summaryField(run, "panel_sha256"),
          },
      /**
       * Each evaluator runtime the rollouts' identities name, with how many rollouts it measured: more than one where
       * rollouts ran on workers or Slurm nodes under another Python, numpy or sandbox, or a resume on another machine.
       */
      evaluators,
      scorer: identity ? { budget: JSON.parse(identity).budget, hone: JSON.parse(identity).hone } : null,
      /** The hone version that made the run's measurements (a discovery rollout's identity, a QA run's summary). */
      hone: identity ? (JSON.parse(identity).hone as string) : summaryField(run, "hone"),
      /** The QA benchmark an optimize run searched on (null for a discovery task's run and other kinds). */
      benchmark: run.kind === "optimize" && isQaBenchmark(config.benchmark) ? config.benchmark.id : null,
      settings: settingsOf(run.kind, config),
      models: roles,
      harnesses: {
        seed: seed?.content_hash ?? null,
        incumbent_commit: incumbent,
        /** The candidate whose harness the incumbent commit is (the seed's own id when nothing was promoted). */
        incumbent_candidate: candidates.find((c) => incumbent !== null && c.commit_sha === incumbent)?.id ?? null,
        candidates: candidates.length,
        by_status: countBy(candidates.map((c) => c.status)),
        identities: [...new Set(rollouts.map((r) => r.identity_digest).filter(Boolean))].length,
      },
      measurements: {
        rollouts: rollouts.length,
        evaluations: rollouts.reduce((a, r) => a + r.evals_used, 0),
        invalid_evaluations: rollouts.reduce((a, r) => a + r.evals_invalid, 0),
        rollout_seconds: Math.round(rollouts.reduce((a, r) => a + r.seconds, 0) * 10) / 10,
        /** Re-evaluations for noise, outside every rollout's budget, by purpose (seed, incumbent, candidate, control). */
        noise_evaluations: noiseBreakdown(db),
        /** QA panels (eval, train): measurements of a harness version, and their task results. */
        qa_measurements: qa.measurements,
        qa_pending: qa.pending,
        task_results: qa.task_results,
      },
      noise: noiseOf(db),
      failed: [
        ...rollouts
          .filter((r) => r.status !== "completed")
          .map((r) => ({ what: `rollout ${r.id}`, why: r.error ?? r.stop_reason ?? r.status })),
        ...candidates
          .filter((c) => c.status === "invalid" || c.status === "repaired")
          .map((c) => ({ what: `proposal ${c.id} (${c.status})`, why: (c.gate_error ?? "").slice(0, 300) })),
        ...qa.failed.map((f) => ({ what: `task ${f.task_id} of ${f.measurement_id}`, why: (f.error ?? "").slice(0, 300) })),
      ],
    };
  } finally {
    db.close();
  }
}

export type Receipt = ReturnType<typeof runReceipt>;

const counts = (by: Record<string, number>) =>
  Object.entries(by)
    .map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`)
    .join(", ");
const score = (v: unknown) => (typeof v === "number" ? (Math.abs(v) >= 1000 ? v.toFixed(2) : v.toPrecision(6)) : "-");
const short = (sha: string | null | undefined) => sha?.slice(0, 12) ?? "-";
const ms = (v: number | null) => (v === null ? "-" : `${v.toFixed(0)} ms`);

function resultLine(kind: string, s: Record<string, unknown> | null): string {
  if (!s) return "-";
  if (kind === "eval")
    return `accuracy ${score(s.accuracy)} over ${s.completed} completed of ${s.tasks} (mean score ${score(s.meanScore)})`;
  if (kind === "train") return `HEAD ${short(String(s.head))} after ${(s.epochs as unknown[]).length} decided epochs`;
  const at = typeof s.best_commit === "string" ? `, harness ${short(s.best_commit)}` : "";
  const v = s.validation as { score?: number | null; tasks?: number } | undefined;
  const validation = v ? `; validation ${score(v.score)} on ${v.tasks} tasks` : "";
  return `best ${score(s.best_score)} (start ${score(s.start_score)})${at}${validation}`;
}

/**
 * Who scored the run: a discovery task's evaluator under its budget, or a QA benchmark's official scorer with the
 * metrics it reported (the first is the accuracy), read from the run's summary.
 */
function scorerLine(r: Receipt): string {
  if (r.scorer)
    return `${r.scorer.budget.maxEvals} evaluations per rollout, ${r.scorer.budget.timeoutSec} s each; hone ${r.scorer.hone}`;
  const s = r.run.summary as { benchmark?: unknown; metric?: unknown; metrics?: unknown } | null;
  if (r.run.kind === "train" && r.settings && "benchmark" in r.settings)
    return `${r.settings.benchmark}'s official scorer (a task is solved when its accuracy rule says so)`;
  if (r.run.kind === "optimize" && r.benchmark)
    return `${r.benchmark}'s official scorer: a candidate's score is its mean over the train questions, the final choice is measured once on validation`;
  if (!s || typeof s.metric !== "string") return "-";
  const names = s.metrics && typeof s.metrics === "object" ? Object.keys(s.metrics) : [s.metric];
  const others = names.filter((n) => n !== s.metric);
  const benchmark = typeof s.benchmark === "string" ? `${s.benchmark}'s ` : "";
  return `${benchmark}official scorer: ${s.metric} (the accuracy)${others.length ? `, ${others.join(", ")}` : ""}`;
}

/**
 * The run's kind, state and times. A run's row says "running" from its start until it finishes, so a run stopped by
 * Ctrl-C or killed says so too: the line says it may have stopped, and how a stopped one continues.
 */
function runLine(run: Receipt["run"]): string {
  const times = `${run.started} → ${run.finished ?? "not finished"}`;
  if (run.status !== "running") return `${run.kind}, ${run.status}, ${times}`;
  const resume =
    run.kind === "optimize" || run.kind === "train" ? ` (\`npx hone ${run.kind} --resume <run-dir>\` continues it)` : "";
  return `${run.kind}, running or stopped before it finished${resume}, ${times}`;
}

/** What was measured: rollouts and their evaluations, and a QA panel's measurements and task results where it has them. */
function measuredLine(m: Receipt["measurements"]): string {
  const rollouts = `${m.rollouts} rollouts, ${m.evaluations} evaluations (${m.invalid_evaluations} invalid), ${m.rollout_seconds} rollout-seconds`;
  if (m.qa_measurements === 0) return rollouts;
  const pending = m.qa_pending ? `, ${m.qa_pending} not finished` : "";
  const qa = `${m.qa_measurements} QA measurements (${m.task_results} task results${pending})`;
  return m.rollouts === 0 ? qa : `${rollouts}; ${qa}`;
}

/** The incumbent's commit and the candidate it is, so a seed kept to the end reads as the seed, not as a change. */
function incumbentOf(h: Receipt["harnesses"]): string {
  if (!h.incumbent_commit) return "-";
  const seed = h.incumbent_candidate && /^(r00-seed|epoch-00|harness)$/.test(h.incumbent_candidate) ? ", the seed" : "";
  return `${short(h.incumbent_commit)} (commit of ${h.incumbent_candidate ?? "no recorded candidate"}${seed})`;
}

/** A version as a run's records hold it (a run someone sent is untrusted): one escaped line of at most 40 characters. */
const versionText = (v: string) => oneLine(v.slice(0, 40));

/** The evaluator's Python, numpy and sandbox a discovery run's identity names (none for runs recorded before). */
function runtimeOf(v: unknown): string {
  const e = v as { python?: unknown; numpy?: unknown; sandbox?: unknown } | undefined;
  if (typeof e?.python !== "string") return "";
  const sandbox = e.sandbox === "bubblewrap" ? ", sealed by bubblewrap" : e.sandbox === "none" ? ", without bubblewrap" : "";
  const numpy = typeof e.numpy === "string" ? `numpy ${versionText(e.numpy)}` : "no numpy";
  return `; evaluated under Python ${versionText(e.python)}, ${numpy}${sandbox}`;
}

/** How many evaluators a receipt's task line lists by name; the rest are counted. */
const EVALUATORS_LISTED = 5;

/** The distinct `task.evaluator` of the rollouts' identities, each with its count of rollouts, most first. */
function evaluatorsOf(rollouts: { identity: string | null }[]): { evaluator: unknown; rollouts: number }[] {
  const by = new Map<string, { evaluator: unknown; rollouts: number }>();
  for (const r of rollouts) {
    if (!r.identity) continue;
    let evaluator: unknown;
    try {
      evaluator = (JSON.parse(r.identity) as { task?: { evaluator?: unknown } } | null)?.task?.evaluator;
    } catch {
      continue; // an unreadable identity: counted nowhere
    }
    if (evaluator === undefined) continue;
    const key = JSON.stringify(evaluator);
    const seen = by.get(key) ?? { evaluator, rollouts: 0 };
    seen.rollouts++;
    by.set(key, seen);
  }
  return [...by.values()].sort((a, b) => b.rollouts - a.rollouts);
}

/** Where the rollouts were measured under more than one evaluator runtime, each with its count. */
function evaluatorsLine(r: Receipt): string {
  if (r.evaluators.length < 2) return "";
  const each = r.evaluators
    .slice(0, EVALUATORS_LISTED)
    .map(
      (e) => `${runtimeOf(e.evaluator).replace(/^; evaluated under /, "")} (${e.rollouts} rollout${e.rollouts === 1 ? "" : "s"})`,
    );
  const more = r.evaluators.length - each.length;
  return `; rollouts measured under ${r.evaluators.length} evaluators: ${each.join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
}

/** The receipt as text: one labelled line per part, the failures listed under their heading. */
export function formatReceipt(r: Receipt): string {
  const settings = Object.entries(r.settings)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k.replace(/_/g, " ")} ${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(", ");
  const noise = r.noise ? describeNoise(r.noise as Parameters<typeof describeNoise>[0]) : "-";
  const lines = [
    ["run", runLine(r.run)],
    ["result", resultLine(r.run.kind, r.run.summary)],
    [
      "task",
      `${r.task.id}${r.task.content ? ` (content ${short(r.task.content)}), ${r.task.metric}, ${r.task.direction === "minimize" ? "lower" : "higher"} is better` : ""}${runtimeOf(r.task.evaluator)}${evaluatorsLine(r)}${r.task.panel_sha256 ? ` (questions sha256 ${short(r.task.panel_sha256)})` : ""}`,
    ],
    ["scorer", scorerLine(r)],
    [
      "hone",
      r.hone ?? (r.run.status === "running" ? "- (not recorded yet: the run has not finished)" : "- (not in this run's records)"),
    ],
    ["settings", settings || "-"],
    ...r.models.map((m) => [
      m.role,
      `${m.model} @ ${m.endpoint ?? "-"}, ${m.dialect}${m.api_key_env ? `, key from $${m.api_key_env}` : ""}: ${m.calls} calls (${m.cache_hits} from the cache), ${m.prompt_tokens} prompt + ${m.completion_tokens} completion tokens, latency p50 ${ms(m.latency_ms_p50)}, p95 ${ms(m.latency_ms_p95)} (live calls only)${Object.keys(m.retried_faults).length ? `; retried ${counts(m.retried_faults)}` : ""}`,
    ]),
    [
      "harnesses",
      `seed ${short(r.harnesses.seed)} (content hash), incumbent ${incumbentOf(r.harnesses)}; ${r.harnesses.candidates} candidates (${counts(r.harnesses.by_status)}); ${r.harnesses.identities} measurement identities`,
    ],
    ["measured", measuredLine(r.measurements)],
    [
      "noise",
      `${noise}; ${r.measurements.noise_evaluations.total} re-evaluations outside the rollouts' budgets${r.measurements.noise_evaluations.total ? ` (${counts(r.measurements.noise_evaluations.by_purpose)})` : ""}`,
    ],
    ["failed", r.failed.length === 0 ? "nothing" : `${r.failed.length}:`],
  ];
  const width = Math.max(...lines.map(([k]) => (k as string).length)) + 1;
  return [
    ...lines.map(([k, v]) => `${(k as string).padEnd(width)} ${v}`),
    ...r.failed.map((f) => `  - ${f.what}: ${f.why.replace(/\s+/g, " ")}`),
  ].join("\n");
}
