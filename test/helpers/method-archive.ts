import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Archive, Candidate, Method, ProposeContext } from "../../src/method/method.ts";
import { offlineReply } from "../../src/model/offline/policy.ts";
import "../../src/model/offline/roles.ts";
import { seedFrom } from "../../src/model/offline/rng.ts";
import type { ChatMessage } from "../../src/model/types.ts";
import { rng } from "../../src/rng.ts";
import { tempDir } from "./fixtures.ts";

// A synthetic archive for a method's propose step (no loop): candidates with trajectories and harness files, and a
// proposer that is the offline model itself (its method roles), every request recorded.

/** Every text file of a harness folder, by relative path. */
export function folderFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, "utf8");
    }
  };
  walk(dir);
  return out;
}

export interface Evaluation {
  valid: boolean;
  score?: number;
  improved?: boolean;
  reason?: string;
}

/** A trajectory.jsonl in the events the executor writes: start, tool calls, evaluations, end. */
export function trajectory(start: number, evaluations: Evaluation[], best: number): string {
  const file = join(tempDir("hone-traj-"), "trajectory.jsonl");
  const lines: unknown[] = [{ type: "rollout_start", start_score: start }];
  evaluations.forEach((e, i) => {
    lines.push({ type: "assistant", tool_calls: [{ function: { name: "edit_program" } }] });
    lines.push({
      type: "evaluation",
      index: i + 1,
      valid: e.valid,
      score: e.score ?? null,
      improved: e.improved ?? false,
      reason: e.reason,
    });
  });
  lines.push({ type: "rollout_end", best_score: best, improved: best > start, stop_reason: "budget" });
  writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\nnot json\n`);
  return file;
}

const cost = { evaluatorCalls: 3, executorTokens: 0, proposerCalls: 0, proposerTokens: 0, seconds: 0 };

export function candidate(
  c: Partial<Candidate> & { id: string; score?: number | null; feedback?: string[]; trajectory?: string },
): Candidate {
  const { score, feedback, trajectory: traj, ...rest } = c;
  const measured =
    score === undefined
      ? undefined
      : {
          split: "train" as const,
          score,
          perTask: { "circle-packing": score },
          repeats: 1,
          feedback: feedback ?? [],
          trajectories: traj ? [traj] : [],
        };
  return { parents: [], round: 0, dir: "", status: measured ? "measured" : "refused", cost, measured, ...rest };
}

export interface Recorded {
  messages: ChatMessage[];
  sample?: number;
  reply: string;
}

/** A ProposeContext over `candidates`, the offline model as its proposer, each request kept in `calls`. */
export function proposeContext<P>(
  method: Method<P>,
  candidates: Candidate[],
  files: Record<string, Record<string, string>>,
  o: { round: number; k: number; params?: Record<string, unknown> },
): { ctx: ProposeContext<P>; calls: Recorded[] } {
  const calls: Recorded[] = [];
  const archive: Archive = { candidates, direction: "maximize" };
  const ctx: ProposeContext<P> = {
    archive,
    round: o.round,
    k: o.k,
    params: method.params.parse(o.params ?? {}),
    rng: rng(seedFrom(7, o.round, "method")),
    proposer: {
      model: "offline",
      chat: { id: "offline", complete: async () => Promise.reject(new Error("not used")) },
      async complete(messages, opts = {}) {
        const r = offlineReply({ messages, sampling: { seed: seedFrom(7, o.round, `method-${opts.sample ?? 0}`) } });
        calls.push({ messages, sample: opts.sample, reply: r.content ?? "" });
        return { text: r.content ?? "", usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
      },
    },
    task: {
      kind: "discovery",
      id: "circle-packing",
      description: "Pack 26 circles in the unit square to maximise the sum of their radii.",
      metric: "sum of radii",
      direction: "maximize",
    },
    budget: { unit: "evaluator_calls", total: 9, used: 0 },
    scratch: tempDir("hone-scratch-"),
    files: (id) => files[id] ?? {},
    specProposals: async () => [],
  };
  return { ctx, calls };
}
