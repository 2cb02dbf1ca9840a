// A synthetic archive for the folder methods' propose tests (no loop): candidate folders copied from the initial
// harness, made-up measurements and trajectories, and a proposer that records every request and answers with the
// offline model (the only model that runs without an endpoint).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Archive, Candidate, ProposeContext, Proposer } from "../../../src/method/method.ts";
import { type ResolvedModel, resolveModel } from "../../../src/model/resolve.ts";
import type { ChatMessage } from "../../../src/model/types.ts";
import { rng } from "../../../src/rng.ts";
import { INITIAL_HARNESS, tempDir } from "../../helpers/fixtures.ts";

export const TASK_ID = "circle-packing";
/** A reference value only the task's own message holds: it must never reach a method's prompt. */
export const SECRET = "reference sum of radii 2.6359";

export interface CandidateSpec {
  id: string;
  round: number;
  parents?: string[];
  score: number | null;
  status?: Candidate["status"];
  kept?: boolean;
  state?: Record<string, unknown>;
  /** Text appended to the initial harness's prompt.md (what makes it this candidate). */
  prompt?: string;
  feedback?: string[];
}

function trajectory(path: string, c: CandidateSpec): void {
  const events = [
    { type: "message", source: "task", role: "user", content: `Pack 26 circles; the ${SECRET}.` },
    {
      type: "assistant",
      content: `plan of ${c.id}`,
      tool_calls: [{ function: { name: "edit_program", arguments: '{"edit": "move circle 3"}' } }],
    },
    { type: "tool_result", name: "evaluate_program", output: JSON.stringify({ valid: true, metrics: { ratio: 0.38 } }) },
    { type: "evaluation", index: 0, valid: c.score !== null, score: c.score, metrics: { ratio_to_reference: 0.38 } },
    { type: "rollout_end", status: "completed", stop_reason: "finish", best_score: c.score },
  ];
  writeFileSync(path, `${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
}

/** The candidates as the loop's archive would hold them, each with its folder, commit and trajectory. */
export function syntheticArchive(specs: readonly CandidateSpec[], direction: Archive["direction"] = "maximize"): Archive {
  const root = tempDir("hone-archive-");
  const candidates = specs.map((s): Candidate => {
    const dir = join(root, "candidates", s.id);
    const status = s.status ?? "measured";
    if (status !== "refused") {
      cpSync(INITIAL_HARNESS, dir, { recursive: true });
      if (s.prompt) writeFileSync(join(dir, "prompt.md"), `${readFileSync(join(dir, "prompt.md"), "utf8")}\n${s.prompt}\n`);
    }
    const rollout = join(root, "rollouts", s.id);
    mkdirSync(rollout, { recursive: true });
    trajectory(join(rollout, "trajectory.jsonl"), s);
    return {
      id: s.id,
      parents: s.parents ?? [],
      round: s.round,
      dir,
      commit: status === "refused" ? undefined : `c-${s.id}`,
      change: s.id === "r00-seed" ? undefined : { kind: "folder" },
      status,
      measured:
        status === "measured"
          ? {
              split: "train",
              score: s.score,
              perTask: { [TASK_ID]: s.score },
              repeats: 1,
              feedback: s.feedback ?? [],
              trajectories: [join(rollout, "trajectory.jsonl")],
            }
          : undefined,
      kept: s.kept === undefined ? undefined : { keep: s.kept, rule: "test", reason: "test" },
      cost: { evaluatorCalls: 1, executorTokens: 0, proposerCalls: 0, proposerTokens: 0, seconds: 0 },
      state: s.state,
    };
  });
  return { candidates, direction };
}

/** A candidate's files as text, as the loop's harnessFiles reads them. */
export function filesOf(archive: Archive, id: string): Record<string, string> {
  const c = archive.candidates.find((x) => x.id === id);
  if (!c?.commit || !existsSync(c.dir)) return {};
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(c.dir, p)] = readFileSync(p, "utf8");
    }
  };
  walk(c.dir);
  return out;
}

export interface Recorded {
  messages: ChatMessage[];
  sample?: number;
  temperature?: number;
}

/** A proposer answering with the offline model, recording each request. */
export function recordingProposer(model: ResolvedModel, calls: Recorded[]): Proposer {
  return {
    model: "offline",
    chat: model.model,
    async complete(messages, o = {}) {
      calls.push({ messages, sample: o.sample, temperature: o.temperature });
      const r = await model.model.complete({
        messages,
        sampling: { temperature: o.temperature, max_tokens: o.maxTokens, seed: 7 + (o.sample ?? 0) },
        trial: o.sample,
      });
      return { text: r.message.content ?? "", usage: r.usage };
    },
  };
}

export const offlineModel = (): Promise<ResolvedModel> => resolveModel({ model: "offline" });

/** A ProposeContext over the archive (specProposals is not used by the folder methods and refuses). */
export function proposeContext<P>(
  archive: Archive,
  params: P,
  proposer: Proposer,
  o: { round?: number; k?: number; seed?: number } = {},
): ProposeContext<P> {
  return {
    archive,
    round: o.round ?? 1,
    k: o.k ?? 2,
    params,
    rng: rng(o.seed ?? 1),
    proposer,
    task: {
      kind: "discovery",
      id: TASK_ID,
      description: "Pack 26 circles in the unit square to maximise the sum of their radii.",
      metric: "sum_radii",
      direction: archive.direction,
    },
    budget: { unit: "evaluator_calls", total: 30, used: 0 },
    scratch: join(tempDir("hone-scratch-"), "r01"),
    files: (id) => filesOf(archive, id),
    specProposals: async () => {
      throw new Error("a folder method does not ask for spec proposals");
    },
  };
}

/** Every user message's text of the recorded calls, joined (what the proposer was shown). */
export const shownText = (calls: readonly Recorded[]): string =>
  calls.flatMap((c) => c.messages.map((m) => String(m.content ?? ""))).join("\n");
