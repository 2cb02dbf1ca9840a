import type * as z from "zod";
import type { HarnessSpec } from "../harness/spec.ts";
import type { ChatMessage, ChatModel, Usage } from "../model/types.ts";

/**
 * The method contract. Nearly every harness-learning method is one loop — pick parent(s), propose a change from
 * what was measured, measure it, keep or drop — and differs in three small rules. A Method gives those rules; the
 * search loop (src/loop/search.ts) drives any Method through gate → Runner → record → keep, on discovery tasks
 * and QA benchmarks alike, with resume, replay, receipts and the console for free.
 */

/** What hone measured of one candidate on the split the method may see (never the test split). */
export interface Measured {
  split: "train" | "validation";
  /** The aggregate (mean over tasks for QA; the rollout's best score for a discovery task); null when invalid. */
  score: number | null;
  /** Per task (QA task id, or the discovery task id): score, null when invalid or failed. */
  perTask: Record<string, number | null>;
  /** How many times each task was measured (noise repeats included). */
  repeats: number;
  /** Short evidence for reflective methods: evaluator feedback, failures, the end of trajectories. */
  feedback: string[];
  /** Trajectory files of the measurement, for methods that read them whole. */
  trajectories: string[];
}

export interface Cost {
  evaluatorCalls: number;
  executorTokens: number;
  proposerCalls: number;
  proposerTokens: number;
  seconds: number;
}

/** One candidate of the archive: a harness version, where it came from, and what it measured. */
export interface Candidate {
  id: string;
  parents: string[];
  round: number;
  /** The harness package folder (materialised from its commit). */
  dir: string;
  commit?: string;
  contentHash?: string;
  /** The change that made it: a spec merged over its first parent, or a whole folder written by a proposer. */
  change?: { kind: "spec"; spec: HarnessSpec } | { kind: "folder" };
  rationale?: string;
  status: "measured" | "refused" | "unmeasurable" | "pending";
  /** Why it was refused or could not be measured. */
  reason?: string;
  measured?: Measured;
  /** Discovery tasks: the best program its rollout found (what a later rollout may start from). */
  program?: string;
  /** Whether the method kept it (its keep rule's decision), and the rule that decided. */
  kept?: { keep: boolean; rule: string; reason: string };
  cost: Cost;
  /** State the method keeps per candidate (ACE's counters, DGM's child counts…), recorded and restored. */
  state?: Record<string, unknown>;
}

export type Direction = "maximize" | "minimize";

/** Everything measured so far, as methods read it (pure data; the loop owns writing it). */
export interface Archive {
  readonly candidates: readonly Candidate[];
  readonly direction: Direction;
}

/** The proposer, as a method calls it: cached, recorded and replayed like every model call. */
export interface Proposer {
  readonly model: string;
  /** The same model as a ChatModel (for a method program's model proxy); its calls are recorded the same way. */
  readonly chat: ChatModel;
  complete(
    messages: ChatMessage[],
    o?: { temperature?: number; maxTokens?: number; sample?: number },
  ): Promise<{ text: string; usage: Usage }>;
}

/** What a method is told about the task: never gold answers, tests, or the evaluator's source. */
export interface TaskBrief {
  kind: "discovery" | "qa";
  id: string;
  description: string;
  metric: string;
  direction: Direction;
  /** The reference value, only where the task says a method may see it. */
  reference?: number;
}

export interface Budget {
  unit: "evaluator_calls" | "executor_tokens" | "proposer_tokens" | "seconds";
  total: number;
  used: number;
}

export interface ProposeContext<P> {
  archive: Archive;
  round: number;
  /** How many proposals the loop asks for this round (the method may return fewer). */
  k: number;
  params: P;
  /** Seeded per (run seed, round): the same draws on resume and replay. */
  rng: () => number;
  proposer: Proposer;
  task: TaskBrief;
  budget: Budget;
  /** A folder the method may write proposals into (folder proposals); the loop removes it once they are compiled. */
  scratch: string;
  /** Files of a candidate's harness, for methods that read them (the prompt, skills, tool code). */
  files(candidateId: string): Record<string, string>;
  /**
   * hone's own spec proposer (the proposer harness's prompt, parsing, one repair with every problem fed back) asked
   * for `k` HarnessSpecs over a candidate: what HarnessTTT and greedy propose with. Invalid slots come back without
   * a spec, with their problems.
   */
  specProposals(parentId: string, k: number): Promise<{ spec?: HarnessSpec; problems: string[]; sample?: Proposal["sample"] }[]>;
}

/** One proposal: a spec over its parent (`spec`), or a complete harness folder (`dir`). */
export interface Proposal {
  parents: string[];
  spec?: HarnessSpec;
  dir?: string;
  rationale?: string;
  /** The proposer's own sample that produced it (prompt and completion), for on-policy learning (LoRA). */
  sample?: { messages: ChatMessage[]; completion: string };
  /** State to record with the candidate (restored into the archive on resume). */
  state?: Record<string, unknown>;
  /** With neither a spec nor a folder: why the method has no candidate here (recorded as the gate's problems). */
  problems?: string[];
}

export interface KeepDecision {
  keep: boolean;
  rule: string;
  reason: string;
}

/** A parameter whose default is worked out when the run starts, from K (proposals per round) or from the task. */
export interface DerivedDefault {
  /** The default as a rule, in the parameter's own spelling where it has one (`min⌈6K/8⌉`). */
  rule: string;
  /** The rule in words, as `hone methods` shows it. */
  words: string;
  /** Its value for K proposals per round, where the default depends on K. */
  forK?: (k: number) => unknown;
}

export interface Method<P = Record<string, unknown>> {
  name: string;
  /** One line: what it is and where it comes from. */
  summary: string;
  /** What a candidate of this method changes. */
  edits: "spec" | "skill" | "playbook" | "folder";
  /** Its parameters, with defaults (validated from CLI flags and config files alike). */
  params: z.ZodType<P>;
  /** The parameters whose default the schema cannot give (it depends on K or on the task): how it is worked out. */
  derivedDefaults?: Record<string, DerivedDefault>;
  /** Where a discovery rollout of a candidate starts: the task's seed program, or the incumbent's best program. */
  startFrom: "seed" | "incumbent";
  propose(ctx: ProposeContext<P>): Promise<Proposal[]>;
  /**
   * The most proposals a round makes when K are asked, where that is not K (ace and skillopt make one step a round,
   * greedy its own `proposals`): what a budget of evaluator calls plans a round's cost with.
   */
  proposalsPerRound?(k: number, params: P): number;
  /** Pure: whether the archive keeps a measured candidate (and with it, for methods with one, the incumbent). */
  keep(archive: Archive, candidate: Candidate, params: P): KeepDecision;
  /** Pure: the method's final choice, measured once on the test split by the platform. */
  choose(archive: Archive, params: P): Candidate | undefined;
}

/** The best measured candidate by aggregate score (ties: the earlier one), the default final choice. */
export function bestMeasured(archive: Archive, kept = false): Candidate | undefined {
  const sign = archive.direction === "maximize" ? 1 : -1;
  let best: Candidate | undefined;
  for (const c of archive.candidates) {
    const s = c.measured?.score;
    if (c.status !== "measured" || s === null || s === undefined || (kept && !c.kept?.keep)) continue;
    const b = best?.measured?.score;
    if (b === undefined || b === null || sign * (s - b) > 0) best = c;
  }
  return best;
}
