import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Db, openDb, type RunRow, runRow } from "../store/db.ts";
import { HarnessRepo } from "../store/git.ts";
import { loadNoise, noiseCounts } from "../store/noise.ts";
import { type CallRow, callsOfRole, candidateStatuses, qaCounts, rolloutSummaries } from "../store/receipts.ts";

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

const q = (sorted: number[], p: number) =>
  sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number) : null;

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
  if (kind === "optimize")
    return {
      rounds: c.rounds,
      proposals_per_round: c.proposalsPerRound,
      max_evals: c.maxEvals,
      concurrency: c.concurrency,
      paired: c.paired,
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

/** What a run's numbers rest on, read from its hone.db and git repository; every run kind has one. */
export function runReceipt(dir: string) {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  try {
    const run = runRow(db) as RunRow;
    const config = JSON.parse(run.config) as Config;
    const models = modelsOf(run.kind, config);
    const roles = (["executor", "proposer"] as const)
      .filter((r) => models[r] || callsOfRole(db, r).length > 0)
      .map((r) => role(r, models[r], callsOfRole(db, r)));
    const rollouts = rolloutSummaries(db);
    const candidates = candidateStatuses(db);
    const qa = qaCounts(db);
    const identity = rollouts.find((r) => r.identity)?.identity;
    const repo = existsSync(join(dir, "harnesses.git")) ? new HarnessRepo(join(dir, "harnesses.git")) : undefined;
    const seed = candidates.find((c) => ["r00-seed", "epoch-00", "harness"].includes(c.id));
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
              (config.panel ? `${config.panel.benchmark}/${config.panel.split}` : `${config.benchmark}/${config.split}`),
          },
      scorer: identity ? { budget: JSON.parse(identity).budget, hone: JSON.parse(identity).hone } : null,
      settings: settingsOf(run.kind, config),
      models: roles,
      harnesses: {
        seed: seed?.content_hash ?? null,
        incumbent_commit: repo?.resolve("refs/heads/main") ?? null,
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
