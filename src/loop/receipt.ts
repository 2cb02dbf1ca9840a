import { join } from "node:path";
import { openDb } from "../store/db.ts";
import { HarnessRepo } from "../store/git.ts";

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

const q = (sorted: number[], p: number) =>
  sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number) : null;

/** What a run's numbers rest on, read from its hone.db and git repository. */
export function runReceipt(dir: string) {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  try {
    const run = db.prepare("SELECT kind, created_at, finished_at, status, config, summary FROM runs WHERE id = 'run'").get() as {
      kind: string;
      created_at: string;
      finished_at: string | null;
      status: string;
      config: string;
      summary: string | null;
    };
    const config = JSON.parse(run.config);
    const roles = ["executor", "proposer"].map((role) => {
      const calls = db
        .prepare("SELECT latency_ms, prompt_tokens, completion_tokens, attempts, cached, faults FROM model_calls WHERE role = ?")
        .all(role) as {
        latency_ms: number;
        prompt_tokens: number;
        completion_tokens: number;
        attempts: number;
        cached: number;
        faults: string | null;
      }[];
      const live = calls
        .filter((c) => !c.cached)
        .map((c) => c.latency_ms)
        .sort((a, b) => a - b);
      const faults: Record<string, number> = {};
      for (const c of calls)
        for (const f of JSON.parse(c.faults ?? "[]") as { kind: string }[]) faults[f.kind] = (faults[f.kind] ?? 0) + 1;
      const m = config[role] ?? {};
      return {
        role,
        model: m.model,
        endpoint: m.model === "offline" && !m.baseUrl ? "offline (in-process)" : (m.baseUrl ?? null),
        dialect: m.dialect ?? "vllm",
        api_key_env: m.model === "offline" ? null : (m.apiKeyEnv ?? "OPENAI_API_KEY"),
        calls: calls.length,
        cache_hits: calls.filter((c) => c.cached).length,
        prompt_tokens: calls.reduce((a, c) => a + c.prompt_tokens, 0),
        completion_tokens: calls.reduce((a, c) => a + c.completion_tokens, 0),
        latency_ms_p50: q(live, 0.5),
        latency_ms_p95: q(live, 0.95),
        retried_faults: faults,
      };
    });
    const rollouts = db
      .prepare(
        "SELECT id, status, stop_reason, error, evals_used, evals_invalid, seconds, identity, identity_digest FROM rollouts ORDER BY id",
      )
      .all() as {
      id: string;
      status: string;
      stop_reason: string | null;
      error: string | null;
      evals_used: number;
      evals_invalid: number;
      seconds: number;
      identity: string | null;
      identity_digest: string | null;
    }[];
    const candidates = db.prepare("SELECT id, status, content_hash, gate_error FROM candidates ORDER BY id").all() as {
      id: string;
      status: string;
      content_hash: string | null;
      gate_error: string | null;
    }[];
    const identity = rollouts.find((r) => r.identity)?.identity;
    const repo = new HarnessRepo(join(dir, "harnesses.git"));
    return {
      run: {
        kind: run.kind,
        status: run.status,
        started: run.created_at,
        finished: run.finished_at,
        summary: run.summary ? JSON.parse(run.summary) : null,
      },
      task: identity ? JSON.parse(identity).task : { id: config.task },
      scorer: identity ? { budget: JSON.parse(identity).budget, hone: JSON.parse(identity).hone } : null,
      settings: {
        rounds: config.rounds,
        proposals_per_round: config.proposalsPerRound,
        max_evals_per_rollout: config.maxMetricCalls,
        concurrency: config.concurrency,
        paired: config.paired,
        seed: config.seed,
        cache: config.cache?.mode ?? "read-write",
        learning: config.learning?.mode,
        replay_of: config.replayOf ?? null,
      },
      models: roles,
      harnesses: {
        seed: candidates.find((c) => c.id === "r00-seed")?.content_hash ?? null,
        incumbent_commit: repo.resolve("refs/heads/main") ?? null,
        candidates: candidates.length,
        by_status: countBy(candidates.map((c) => c.status)),
        identities: [...new Set(rollouts.map((r) => r.identity_digest).filter(Boolean))].length,
      },
      measurements: {
        rollouts: rollouts.length,
        evaluations: rollouts.reduce((a, r) => a + r.evals_used, 0),
        invalid_evaluations: rollouts.reduce((a, r) => a + r.evals_invalid, 0),
        rollout_seconds: Math.round(rollouts.reduce((a, r) => a + r.seconds, 0) * 10) / 10,
      },
      failed: [
        ...rollouts
          .filter((r) => r.status !== "completed")
          .map((r) => ({ what: `rollout ${r.id}`, why: r.error ?? r.stop_reason ?? r.status })),
        ...candidates
          .filter((c) => c.status === "invalid" || c.status === "repaired")
          .map((c) => ({ what: `proposal ${c.id} (${c.status})`, why: (c.gate_error ?? "").slice(0, 300) })),
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

/** The receipt as text: one labelled line per part, the failures listed under their heading. */
export function formatReceipt(r: Receipt): string {
  const s = r.settings;
  const summary = r.run.summary as { best_score?: number; start_score?: number; best_commit?: string } | null;
  const lines = [
    ["run", `${r.run.kind}, ${r.run.status}, ${r.run.started} → ${r.run.finished ?? "not finished"}`],
    [
      "result",
      summary
        ? `best ${score(summary.best_score)} (start ${score(summary.start_score)}), harness ${short(summary.best_commit)}`
        : "-",
    ],
    [
      "task",
      `${r.task.id}${r.task.content ? ` (content ${short(r.task.content)}), ${r.task.metric}, ${r.task.direction === "minimize" ? "lower" : "higher"} is better` : ""}`,
    ],
    [
      "scorer",
      r.scorer
        ? `${r.scorer.budget.maxEvals} evaluations per rollout, ${r.scorer.budget.timeoutSec} s each; hone ${r.scorer.hone}`
        : "-",
    ],
    [
      "settings",
      [
        `${s.rounds} round(s) of ${s.proposals_per_round} proposal(s)`,
        `${s.max_evals_per_rollout} evaluations per rollout`,
        `concurrency ${s.concurrency}`,
        s.paired ? "paired" : "unpaired",
        `seed ${s.seed}`,
        `cache ${s.cache}`,
        `learning ${s.learning ?? "context"}`,
        ...(s.replay_of ? [`a replay of ${s.replay_of}`] : []),
      ].join(", "),
    ],
    ...r.models.map((m) => [
      m.role,
      `${m.model} @ ${m.endpoint ?? "-"}, ${m.dialect}${m.api_key_env ? `, key from $${m.api_key_env}` : ""}: ${m.calls} calls (${m.cache_hits} from the cache), ${m.prompt_tokens} prompt + ${m.completion_tokens} completion tokens, latency p50 ${ms(m.latency_ms_p50)}, p95 ${ms(m.latency_ms_p95)} (live calls only)${Object.keys(m.retried_faults).length ? `; retried ${counts(m.retried_faults)}` : ""}`,
    ]),
    [
      "harnesses",
      `seed ${short(r.harnesses.seed)}, incumbent ${short(r.harnesses.incumbent_commit)}; ${r.harnesses.candidates} candidates (${counts(r.harnesses.by_status)}); ${r.harnesses.identities} measurement identities`,
    ],
    [
      "measured",
      `${r.measurements.rollouts} rollouts, ${r.measurements.evaluations} evaluations (${r.measurements.invalid_evaluations} invalid), ${r.measurements.rollout_seconds} rollout-seconds`,
    ],
    ["failed", r.failed.length === 0 ? "nothing" : `${r.failed.length}:`],
  ];
  const width = Math.max(...lines.map(([k]) => (k as string).length)) + 1;
  return [
    ...lines.map(([k, v]) => `${(k as string).padEnd(width)} ${v}`),
    ...r.failed.map((f) => `  - ${f.what}: ${f.why.replace(/\s+/g, " ")}`),
  ].join("\n");
}
