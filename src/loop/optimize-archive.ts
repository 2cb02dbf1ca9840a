// A method's view of an optimize run: every candidate with its lineage, measurement and kept state, from hone.db.
// A discovery candidate is measured by its rollout; a QA candidate by its panel measurement on the train split,
// task by task (measured.perTask), so a method reads per-task scores on the split it may see and nothing else.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Archive, Candidate, Cost, Measured } from "../method/method.ts";
import { allCandidates } from "../store/candidates.ts";
import { methodStates } from "../store/method-state.ts";
import { measurements, taskResults } from "../store/qa.ts";
import { candidateRollouts, invalidReasonsByRollout } from "../store/rollouts.ts";
import type { SearchContext } from "./optimize-context.ts";

const FEEDBACK = 5;

/** What a candidate's measurement gives the archive (status, measured, program, cost, why not measured). */
interface Measurement {
  status: Candidate["status"];
  reason?: string;
  measured?: Measured;
  program?: string;
  cost: Cost;
}

const noCost: Cost = { evaluatorCalls: 0, executorTokens: 0, proposerCalls: 0, proposerTokens: 0, seconds: 0 };

/** Discovery: each candidate's rollout, its own best score and the evaluator's feedback on its invalid programs. */
function rolloutMeasurements(ctx: SearchContext): Map<string, Measurement> {
  const max = ctx.target.direction === "maximize";
  const out = new Map<string, Measurement>();
  const reasons = invalidReasonsByRollout(ctx.db, ctx.runId, FEEDBACK);
  for (const [id, r] of candidateRollouts(ctx.db, ctx.runId)) {
    const own = max ? r.own_max : r.own_min;
    const completed = r.status === "completed";
    const rolloutDir = r.dir ? join(ctx.dir, r.dir) : undefined;
    out.set(id, {
      status: completed ? "measured" : "unmeasurable",
      reason: r.error ?? undefined,
      measured: completed
        ? {
            split: "train",
            score: own,
            perTask: { [ctx.target.id]: own },
            repeats: 1,
            feedback: reasons.get(r.id) ?? [],
            trajectories: rolloutDir ? [join(rolloutDir, "trajectory.jsonl")] : [],
          }
        : undefined,
      program: r.best_program ?? undefined,
      cost: { ...noCost, evaluatorCalls: r.evals_used ?? 0, executorTokens: r.tokens ?? 0, seconds: r.seconds ?? 0 },
    });
  }
  return out;
}

/**
 * QA: each candidate's train measurement: the mean over tasks without an infrastructure failure, every task's score
 * (null where the infrastructure failed), and as feedback the tasks it got wrong with the answer it gave.
 */
function panelMeasurements(ctx: SearchContext): Map<string, Measurement> {
  const out = new Map<string, Measurement>();
  for (const m of measurements(ctx.db)) {
    if (m.split !== "train" || m.id !== m.candidate_id) continue;
    const rows = taskResults(ctx.db, m.id);
    const cost = { ...noCost, evaluatorCalls: rows.length, executorTokens: rows.reduce((a, r) => a + r.tokens, 0) };
    if (m.status !== "finished") {
      out.set(m.id, { status: "pending", cost });
      continue;
    }
    if (m.infra === m.tasks) {
      out.set(m.id, { status: "unmeasurable", reason: `every task failed: ${rows[0]?.error ?? "infrastructure"}`, cost });
      continue;
    }
    const wrong = rows.filter((r) => r.status === "unsolved").slice(0, FEEDBACK);
    out.set(m.id, {
      status: "measured",
      measured: {
        split: "train",
        score: m.mean_score,
        perTask: Object.fromEntries(rows.map((r) => [r.task_id, r.status === "infra" ? null : r.score])),
        repeats: 1,
        feedback: wrong.map(
          (r) => `${r.task_id}: answered ${JSON.stringify((r.extracted ?? r.answer ?? "").slice(0, 200))}, scored ${r.score}`,
        ),
        trajectories: rows.flatMap((r) => (r.trajectory ? [join(ctx.dir, r.trajectory)] : [])),
      },
      cost,
    });
  }
  return out;
}

function statusOf(candidateStatus: string, m: Measurement | undefined): Candidate["status"] {
  if (candidateStatus === "invalid") return "refused";
  return m?.status ?? "pending";
}

/** The archive as methods read it, rebuilt from the records (so a resumed run reads the same archive). */
export function buildArchive(ctx: SearchContext): Archive {
  const rows = allCandidates(ctx.db);
  const states = methodStates(ctx.db, ctx.runId);
  const measured = ctx.target.kind === "qa" ? panelMeasurements(ctx) : rolloutMeasurements(ctx);
  const byCommit = new Map(rows.filter((c) => c.commit_sha).map((c) => [c.commit_sha as string, c.id]));
  const candidates: Candidate[] = rows.map((c) => {
    const st = states.get(c.id);
    const m = measured.get(c.id);
    const parents = st?.parents ?? (c.id === "r00-seed" ? [] : [byCommit.get(c.parent_commit)].filter((p): p is string => !!p));
    const status = statusOf(c.status, m);
    return {
      id: c.id,
      parents,
      round: c.round,
      dir: join(ctx.dir, "candidates", c.id),
      commit: c.commit_sha ?? undefined,
      contentHash: c.content_hash ?? undefined,
      change: c.spec && c.status !== "invalid" ? { kind: "spec", spec: JSON.parse(c.spec) } : undefined,
      rationale: st?.rationale ?? undefined,
      status,
      reason: c.status === "invalid" ? (c.gate_error ?? "refused by the gate") : m?.reason,
      measured: status === "measured" ? m?.measured : undefined,
      program: m?.program,
      kept:
        st?.kept === null || st?.kept === undefined ? undefined : { keep: st.kept, rule: st.rule ?? "", reason: st.reason ?? "" },
      cost: m?.cost ?? noCost,
      // Read through: the row parses its state only when a method reads it.
      get state() {
        return st?.state ?? undefined;
      },
    };
  });
  return { candidates, direction: ctx.target.direction };
}

const MAX_FILE = 64 << 10;

/** A candidate's harness files as text (bounded), for methods that read or rewrite them. */
export function harnessFiles(ctx: SearchContext, archive: Archive, id: string): Record<string, string> {
  const c = archive.candidates.find((x) => x.id === id);
  if (!c?.commit) return {};
  const dir = ctx.candidateDir(c.id, c.commit);
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && st.size <= MAX_FILE) out[relative(dir, p)] = readFileSync(p, "utf8");
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}
