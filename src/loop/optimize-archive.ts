// A method's view of an optimize run: every candidate with its lineage, measurement and kept state, from hone.db.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Archive, Candidate, TaskBrief } from "../method/method.ts";
import { allCandidates } from "../store/candidates.ts";
import { methodStates } from "../store/method-state.ts";
import { candidateRollouts, invalidReasons } from "../store/rollouts.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { RunContext } from "./optimize-context.ts";

const FEEDBACK = 5;

function statusOf(candidateStatus: string, rollout: { status: string } | undefined): Candidate["status"] {
  if (candidateStatus === "invalid") return "refused";
  if (!rollout) return "pending";
  return rollout.status === "completed" ? "measured" : "unmeasurable";
}

/** The archive as methods read it, rebuilt from the records (so a resumed run reads the same archive). */
export function buildArchive(ctx: RunContext): Archive {
  const rows = allCandidates(ctx.db);
  const states = methodStates(ctx.db, ctx.runId);
  const rollouts = candidateRollouts(ctx.db, ctx.runId);
  const byCommit = new Map(rows.filter((c) => c.commit_sha).map((c) => [c.commit_sha as string, c.id]));
  const max = ctx.task.direction === "maximize";
  const candidates: Candidate[] = rows.map((c) => {
    const st = states.get(c.id);
    const r = rollouts.get(c.id);
    const own = r ? (max ? r.own_max : r.own_min) : null;
    const parents = st?.parents ?? (c.id === "r00-seed" ? [] : [byCommit.get(c.parent_commit)].filter((p): p is string => !!p));
    const status = statusOf(c.status, r);
    const rolloutDir = r?.dir ? join(ctx.dir, r.dir) : undefined;
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
      reason: c.status === "invalid" ? (c.gate_error ?? "refused by the gate") : (r?.error ?? undefined),
      measured:
        status === "measured" && r
          ? {
              split: "train",
              score: own,
              perTask: { [ctx.task.id]: own },
              repeats: 1,
              feedback: invalidReasons(ctx.db, r.id, FEEDBACK),
              trajectories: rolloutDir ? [join(rolloutDir, "trajectory.jsonl")] : [],
            }
          : undefined,
      program: r?.best_program ?? undefined,
      kept:
        st?.kept === null || st?.kept === undefined ? undefined : { keep: st.kept, rule: st.rule ?? "", reason: st.reason ?? "" },
      cost: {
        evaluatorCalls: r?.evals_used ?? 0,
        executorTokens: r?.tokens ?? 0,
        proposerCalls: 0,
        proposerTokens: 0,
        seconds: r?.seconds ?? 0,
      },
      state: st?.state ?? undefined,
    };
  });
  return { candidates, direction: ctx.task.direction };
}

/** What a method is told of a discovery task: no evaluator, no reference unless the task allows it. */
export function taskBrief(task: DiscoveryTask, showReference = false): TaskBrief {
  return {
    kind: "discovery",
    id: task.id,
    description: task.description,
    metric: task.metric,
    direction: task.direction,
    reference: showReference ? task.reference?.value : undefined,
  };
}

const MAX_FILE = 64 << 10;

/** A candidate's harness files as text (bounded), for methods that read or rewrite them. */
export function harnessFiles(ctx: RunContext, archive: Archive, id: string): Record<string, string> {
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
