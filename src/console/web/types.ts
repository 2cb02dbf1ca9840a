// Shapes of the console's JSON API (src/console/api.ts and run-reader.ts).

export interface Cost {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached: number;
  seconds: number;
}

export interface RunSummary {
  id: string;
  kind: string;
  status: string;
  task: string | null;
  method: string;
  executor: string | null;
  proposer: string | null;
  rounds_planned: number | null;
  rounds_done: number;
  best_score: number | null;
  start_score: number | null;
  rollouts: number;
  /** [incumbent, best] per finished round, for the runs list's sparkline. */
  round_scores: [number | null, number | null][];
  direction: "maximize" | "minimize";
  cost: Cost;
  created_at: string;
  finished_at: string | null;
}

export interface Round {
  round: number;
  status: string;
  incumbent_commit: string;
  incumbent_score: number | null;
  best_score: number | null;
  moved: number;
  started_at: string;
  finished_at: string | null;
}

/** A candidate's point on the score chart. kind: 1 scored, 2 no score (refused or failed), 0 not drawn. */
export interface CurvePoint {
  round: number;
  slot: number;
  score: number | null;
  kind: number;
}

/** The run page's chart columns, one entry per candidate (the server sends columns, not objects). */
export interface CurveColumns {
  round: number[];
  slot: number[];
  score: (number | null)[];
  kind: number[];
}

export interface CandidateRow {
  id: string;
  round: number;
  slot: number;
  status: string;
  score: number | null;
  reward: number | null;
  advantage: number | null;
  changed: string[];
  gate_error: string | null;
  repaired: number;
  commit_sha: string | null;
  parent: string | null;
  /** How many candidates were proposed from this one's harness. */
  children: number;
  /** The method's keep decision (its own rule, beside hone's ratchet), when the method has made it. */
  method_decision?: { kept: boolean | null; rule: string | null; reason: string | null } | null;
}

export interface RunPage extends RunSummary {
  rounds: Round[];
  candidates_total: number;
  curve: CurveColumns;
}

/** One page of a paginated list. */
export interface Page<T> {
  total: number;
  offset: number;
  limit: number;
  items: T[];
}

export interface RolloutRow {
  id: string;
  kind: string;
  status: string;
  stop_reason: string | null;
  error?: string | null;
  start_score: number | null;
  best_score: number | null;
  improved: number | null;
  evals_used: number;
  evals_invalid: number;
  seconds: number;
}

export interface CandidateDetail extends Omit<CandidateRow, "changed" | "children"> {
  changed: string[];
  spec: unknown;
  content_hash: string | null;
  parent_commit: string;
  files: string[];
  rollouts: RolloutRow[];
}

export interface Evaluation {
  idx: number;
  valid: number;
  score: number | null;
  reason: string | null;
  program_sha: string;
  seconds: number;
}

export interface RolloutDetail extends RolloutRow {
  round: number;
  candidate_id: string;
  seed: number;
  prompt_tokens: number;
  completion_tokens: number;
  model_calls: number;
  identity: Record<string, unknown> | null;
  identity_digest: string | null;
  evaluations: Evaluation[];
}

export type TrajectoryEvent = Record<string, unknown> & { type: string; t?: number; iteration?: number };

export interface Trajectory {
  total: number;
  offset: number;
  limit: number;
  events: TrajectoryEvent[];
}

/** One QA measurement: a harness measured on a panel of tasks (an eval, or one epoch of a train run). */
export interface Measurement {
  id: string;
  round: number;
  candidate_id: string;
  status: string;
  tasks: number;
  solved: number | null;
  infra: number | null;
  mean_score: number | null;
}

/** One task's result in a measurement: the executor's answer, what the scorer extracted, its trajectory file. */
export interface TaskResult {
  measurement_id: string;
  task_id: string;
  status: string;
  score: number;
  steps: number;
  tokens: number;
  error: string | null;
  extracted: string | null;
  answer: string | null;
  trajectory: string | null;
}

export interface TaskResults extends Page<TaskResult> {
  measurements: Measurement[];
}
