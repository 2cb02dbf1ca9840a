// A synthetic archive and a propose context over it, for the prompt optimizers' tests (no loop, no rollouts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { HarnessSpec } from "../../../src/harness/spec.ts";
import type { Archive, Candidate, Direction, ProposeContext } from "../../../src/method/method.ts";
import "../../../src/model/offline/roles.ts";
import { offlineReply } from "../../../src/model/offline/policy.ts";
import { seedFrom } from "../../../src/model/offline/rng.ts";
import type { ChatMessage } from "../../../src/model/types.ts";
import { rng } from "../../../src/rng.ts";
import { INITIAL_HARNESS } from "../../helpers/fixtures.ts";

export const SEED_PROMPT = readFileSync(join(INITIAL_HARNESS, "prompt.md"), "utf8").trim();
const SEED_FILES: Record<string, string> = {
  "agent.yaml": readFileSync(join(INITIAL_HARNESS, "agent.yaml"), "utf8"),
  "prompt.md": `${SEED_PROMPT}\n`,
  "skills/discovery/SKILL.md": readFileSync(join(INITIAL_HARNESS, "skills", "discovery", "SKILL.md"), "utf8"),
};

const cost = { evaluatorCalls: 0, executorTokens: 0, proposerCalls: 0, proposerTokens: 0, seconds: 0 };

export interface Synthetic {
  id: string;
  score?: number | null;
  round?: number;
  parents?: string[];
  /** The system prompt its spec set (none: the seed's). */
  prompt?: string;
  spec?: HarnessSpec;
  status?: Candidate["status"];
  state?: Record<string, unknown>;
  feedback?: string[];
  /** Per-task scores (a QA benchmark's tasks); defaults to none. */
  perTask?: Record<string, number | null>;
  /** Defaults to a hash of its prompt, as the loop's content hash would differ exactly when the texts do. */
  hash?: string;
}

/** Candidates as buildArchive makes them: measured with a score, the change a spec setting the system prompt. */
export function archiveOf(rows: Synthetic[], direction: Direction = "maximize"): Archive {
  const candidates: Candidate[] = rows.map((r) => {
    const spec = r.spec ?? (r.prompt === undefined ? undefined : { system_prompt: r.prompt });
    const status = r.status ?? (r.score === null ? "unmeasurable" : "measured");
    return {
      id: r.id,
      parents: r.parents ?? (r.id === "r00-seed" ? [] : ["r00-seed"]),
      round: r.round ?? Number(r.id.slice(1, 3)),
      dir: `/nonexistent/${r.id}`,
      commit: `c-${r.id}`,
      contentHash: r.hash ?? `h:${r.prompt ?? SEED_PROMPT}`,
      change: spec ? { kind: "spec", spec } : undefined,
      status,
      measured:
        status === "measured"
          ? {
              split: "train",
              score: r.score ?? 0,
              perTask: r.perTask ?? {},
              repeats: 1,
              feedback: r.feedback ?? [],
              trajectories: [],
            }
          : undefined,
      cost,
      state: r.state,
    };
  });
  return { candidates, direction };
}

export interface Call {
  messages: ChatMessage[];
  temperature?: number;
  sample?: number;
}

/**
 * A propose context over the archive. The proposer is the offline model itself (its method roles), called in
 * process as the loop's proposer calls it, or a script of replies; every call is kept for the test to read.
 */
export function contextOf<P>(
  archive: Archive,
  params: P,
  o: { round?: number; k?: number; replies?: (call: Call) => string } = {},
): ProposeContext<P> & { calls: Call[] } {
  const round = o.round ?? Math.max(0, ...archive.candidates.map((c) => c.round)) + 1;
  const calls: Call[] = [];
  const complete = async (messages: ChatMessage[], c: { temperature?: number; maxTokens?: number; sample?: number } = {}) => {
    if (!messages.some((m) => m.role === "user")) throw new Error("a proposer call needs a user message");
    calls.push({ messages, temperature: c.temperature, sample: c.sample });
    const text = o.replies
      ? o.replies(calls[calls.length - 1] as Call)
      : (offlineReply({ messages, sampling: { seed: seedFrom(1, round, `method-${c.sample ?? 0}`) } }).content ?? "");
    return { text, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
  };
  return {
    archive,
    round,
    k: o.k ?? 3,
    params,
    rng: rng(seedFrom(1, round, "method")),
    proposer: { model: "offline", chat: undefined as never, complete },
    task: {
      kind: "discovery",
      id: "circle-packing",
      description: "Pack 26 circles in the unit square to maximise the sum of their radii.",
      metric: "sum_radii",
      direction: archive.direction,
    },
    budget: { unit: "evaluator_calls", total: 100, used: 0 },
    scratch: "/nonexistent/scratch",
    files: (id) => {
      const c = archive.candidates.find((x) => x.id === id);
      if (!c) return {};
      const prompt = c.change?.kind === "spec" ? c.change.spec.system_prompt : undefined;
      return prompt ? { ...SEED_FILES, "prompt.md": `${prompt}\n` } : SEED_FILES;
    },
    specProposals: async () => {
      throw new Error("the prompt optimizers write their own specs");
    },
    calls,
  };
}

/** The fenced component blocks of a message, by name and body. */
export function blocksIn(text: string): { name: string; body: string }[] {
  return [...text.matchAll(/```component ([^\n`]+)\n([\s\S]*?)\n```/g)].map((m) => ({ name: m[1] ?? "", body: m[2] ?? "" }));
}

export const lastUser = (c: Call): string => String([...c.messages].reverse().find((m) => m.role === "user")?.content ?? "");
export const systemOf = (c: Call): string => String(c.messages.find((m) => m.role === "system")?.content ?? "");
