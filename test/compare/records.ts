import type { CellIdentity, CellRecord, CurvePoint, TaskResult } from "../../src/compare/cell.ts";

/** A cell identity as a runner would fill it; `change` edits one component. */
export function identity(change: (id: CellIdentity) => void = () => {}, direction = "maximize"): CellIdentity {
  const id: CellIdentity = {
    measurement: {
      task: { id: "gsm8k/test", content: "c0ffee", metric: "strict-match", direction },
      executor: { endpoint: "offline", model: "offline", dialect: "vllm" },
      sampling: { temperature: 0.7 },
      budget: { maxEvals: 20, timeoutSec: 60 },
      harness: "seedharness01",
      hone: "0.1.0",
    },
    proposer: { endpoint: "offline", model: "offline", dialect: "vllm" },
    split: "test",
    scorer: "gsm8k strict-match (lm-evaluation-harness)",
    repeats: 1,
    budget: { unit: "evaluator_calls", size: 60 },
  };
  change(id);
  return id;
}

/** Task results from scores (null: an invalid result), named t1, t2, … */
export const tasks = (scores: readonly (number | null)[]): TaskResult[] =>
  scores.map((s, i) =>
    s === null
      ? { task: `t${i + 1}`, score: null, valid: false, reason: "timed out" }
      : { task: `t${i + 1}`, score: s, valid: true },
  );

export const points = (xy: readonly [number, number][]): CurvePoint[] =>
  xy.map(([x, score]) => ({ x, score, measured_by: "hone" }));

export interface RecordSpec {
  benchmark?: string;
  harness?: string;
  method: string;
  seed: number;
  final: readonly (number | null)[];
  seedHarness?: readonly (number | null)[];
  curve?: readonly [number, number][];
  identity?: CellIdentity;
  cost?: Partial<CellRecord["cost"]>;
  testSeen?: boolean;
}

/** A finished cell × seed record. */
export function cellRecord(s: RecordSpec): CellRecord {
  const id = s.identity ?? identity();
  return {
    format: "hone-cell/1",
    benchmark: s.benchmark ?? "gsm8k-slice",
    harness: s.harness ?? "qa",
    method: s.method,
    seed: s.seed,
    identity: id,
    test_seen_by_method: s.testSeen ?? false,
    final: { candidate: "r03-k1", harness: `final-${s.method}-${s.seed}`, tasks: tasks(s.final) },
    seed_harness: { candidate: "seed", harness: id.measurement.harness, tasks: tasks(s.seedHarness ?? s.final.map(() => 0)) },
    curve: { split: "validation", points: points(s.curve ?? [[0, 0]]) },
    method_reported: [],
    cost: { proposer_calls: 3, proposer_tokens: 900, executor_tokens: 12_000, evaluator_calls: 60, seconds: 4.5, ...s.cost },
    finished: "2026-01-02T03:04:05.000Z",
  };
}
