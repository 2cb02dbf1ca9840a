import * as z from "zod";
import type { IdentityParts } from "../measure/identity.ts";
import { BUDGET_UNITS, type BudgetUnit } from "./experiment.ts";

/**
 * What one finished cell × seed of a `hone compare` grid provides: the runner writes it as `cell.json` in the cell ×
 * seed's run directory (`<experiment out>/<benchmark>+<harness>+<method>/seed-<n>/cell.json`) when the cell is done,
 * and the report reads nothing else. Field names are the JSON's.
 */
export interface CellRecord {
  format: "hone-cell/1";
  /** The grid's labels (the experiment file's `name`s) and the seed the method ran with. */
  benchmark: string;
  harness: string;
  method: string;
  seed: number;
  /** What makes this cell comparable with another; cells whose identities differ are never compared. */
  identity: CellIdentity;
  /**
   * Every setting the cell × seed was made under (`cellSettings`: the experiment file's fields, the seed harness's,
   * the method's and the tasks' content), recorded when it started: a rerun whose settings differ refuses to reuse it.
   * Absent in cells an earlier hone wrote.
   */
  settings?: Record<string, unknown>;
  /** Whether the method's splits included test tasks (test-time discovery): disclosed beside the cell's numbers. */
  test_seen_by_method: boolean;
  /** The test split, measured by hone once at the end (with `identity.repeats`), on the method's final choice… */
  final: ChoiceResult;
  /** …and on the seed harness the method started from (the baseline row; the cell's gain is final − this). */
  seed_harness: ChoiceResult;
  /** What hone measured while the method searched, on the budget's x-axis. */
  curve: Curve;
  /** A method's own claims, if it makes any: kept apart, never drawn as hone's, never used in a statistic. */
  method_reported: MethodClaim[];
  /** The cost of improving (the search, not the final test measurement). */
  cost: CellCost;
  /** When the cell × seed finished (ISO 8601). */
  finished: string;
}

/**
 * A cell's measurement identity: IdentityParts (`measurement.task` is the test split's task set: `id` names it,
 * `content` hashes its tasks and evaluator or scorer, with its metric and direction; `measurement.harness` is the
 * seed harness's content hash; `measurement.budget` the per-rollout scorer budget) plus the proposer model, the
 * split the results are on, the scorer, the repeats per task and the experiment's one budget.
 */
export interface CellIdentity {
  measurement: IdentityParts;
  proposer: { endpoint: string; model: string; dialect: string };
  split: string;
  /** The scoring rule by name and version (e.g. "gsm8k strict-match (lm-eval)", or the evaluator's content hash). */
  scorer: string;
  repeats: number;
  budget: { unit: BudgetUnit; size: number };
}

/** One harness measured on the test split: which candidate it is, and each task's result. */
export interface ChoiceResult {
  /** The candidate's id in the cell's run directory ("seed" for the seed harness). */
  candidate: string;
  /** Its content hash. */
  harness: string;
  tasks: TaskResult[];
}

/**
 * One task's test result: the mean over the repeats. `valid: false` (an invalid program, an unmeasured task) has no
 * score; the report leaves such a seed out of the cell's mean and such a pair out of a comparison, and says so.
 */
export interface TaskResult {
  task: string;
  score: number | null;
  valid: boolean;
  reason?: string;
}

/** Measurements during the search, in the order made: `x` is the spend so far in `identity.budget.unit`. */
export interface Curve {
  split: "train" | "validation";
  points: CurvePoint[];
}

/** One measurement (the report takes the best so far); always hone's own. */
export interface CurvePoint {
  x: number;
  score: number;
  measured_by: "hone";
}

/** What a method (its search) says of its own choice: never hone's test measurement, never drawn or used as one. */
export interface MethodClaim {
  /** The spend (in the budget's unit) when the claim was made. */
  x?: number;
  score: number;
  /** The split the method's own score is on (train or validation: it never sees test). */
  split?: "train" | "validation";
  /** The candidate the claim is about (the final choice's id in the cell's run). */
  candidate?: string;
  note?: string;
}

/** Spend per cell × seed; the budget's unit is one of these fields, so the budget spent is `cost[budget.unit]`. */
export interface CellCost {
  proposer_calls: number;
  proposer_tokens: number;
  executor_tokens: number;
  evaluator_calls: number;
  seconds: number;
}
export const COST_FIELDS = ["proposer_calls", "proposer_tokens", "executor_tokens", "evaluator_calls", "seconds"] as const;

const MAX_ITEMS = 100_000;
const text = z.string().min(1).max(1000);
const count = z.number().int().min(0);
const finite = z.number(); // zod 4 refuses Infinity and NaN (JSON has neither)
const amount = z.number().min(0);
// Sampling fields are scalars, or one level of them (vLLM's chat_template_kwargs): no deep nesting to walk.
const scalar = z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()]);

/**
 * Whether a JSON value nests at most `depth` arrays or objects deep, walked without recursion: a record's settings are
 * compared and shown by recursive functions, and a file's could be nested a million deep.
 */
export function nestsAtMost(value: unknown, depth: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== "object") continue;
    if (d >= depth) return false;
    for (const x of Object.values(v)) stack.push([x, d + 1]);
  }
  return true;
}
export const MAX_SETTING_DEPTH = 16;

const taskResultSchema = z
  .object({ task: text, score: finite.nullable(), valid: z.boolean(), reason: z.string().max(4000).optional() })
  .strict()
  .refine((t) => !t.valid || t.score !== null, { message: "a valid result needs a score", path: ["score"] });

const choiceSchema = z
  .object({ candidate: text, harness: text, tasks: z.array(taskResultSchema).min(1).max(MAX_ITEMS) })
  .strict();

const identitySchema = z
  .object({
    measurement: z
      .object({
        task: z
          .object({
            id: text,
            content: text,
            metric: text,
            direction: z.enum(["maximize", "minimize"]),
            evaluator: z
              .object({ python: text, numpy: text.nullable(), sandbox: z.enum(["bubblewrap", "none"]).optional() })
              .strict()
              .optional(),
          })
          .strict(),
        executor: z.object({ endpoint: text, model: text, dialect: text }).strict(),
        sampling: z.record(z.string().max(200), z.union([scalar, z.record(z.string().max(200), scalar)])),
        budget: z.object({ maxEvals: count, timeoutSec: z.number().min(0) }).strict(),
        harness: text,
        hone: text,
      })
      .strict(),
    proposer: z.object({ endpoint: text, model: text, dialect: text }).strict(),
    split: text,
    scorer: text,
    repeats: z.number().int().min(1),
    budget: z.object({ unit: z.enum(BUDGET_UNITS), size: z.number().positive() }).strict(),
  })
  .strict();

/** The record as the reader checks it: a runner's output is trusted no more than any file. */
export const cellRecordSchema: z.ZodType<CellRecord> = z
  .object({
    format: z.literal("hone-cell/1"),
    benchmark: text,
    harness: text,
    method: text,
    seed: count,
    identity: identitySchema,
    settings: z
      .record(
        z.string().max(200),
        z.unknown().refine((v) => nestsAtMost(v, MAX_SETTING_DEPTH), `nests deeper than ${MAX_SETTING_DEPTH} levels`),
      )
      .optional(),
    test_seen_by_method: z.boolean(),
    final: choiceSchema,
    seed_harness: choiceSchema,
    curve: z
      .object({
        split: z.enum(["train", "validation"]),
        points: z.array(z.object({ x: amount, score: finite, measured_by: z.literal("hone") }).strict()).max(MAX_ITEMS),
      })
      .strict(),
    method_reported: z
      .array(
        z
          .object({
            x: finite.optional(),
            score: finite,
            split: z.enum(["train", "validation"]).optional(),
            candidate: text.optional(),
            note: z.string().max(4000).optional(),
          })
          .strict(),
      )
      .max(MAX_ITEMS),
    cost: z
      .object({
        proposer_calls: count,
        proposer_tokens: amount,
        executor_tokens: amount,
        evaluator_calls: count,
        seconds: amount,
      })
      .strict(),
    finished: z.string().datetime({ offset: true }),
  })
  .strict()
  .superRefine((r, ctx) => {
    const ids = (c: ChoiceResult) => c.tasks.map((t) => t.task);
    for (const side of ["final", "seed_harness"] as const) {
      const seen = new Set<string>();
      ids(r[side]).forEach((id, i) => {
        if (seen.has(id))
          ctx.addIssue({ code: "custom", message: `task "${id}" appears twice`, path: [side, "tasks", i, "task"] });
        seen.add(id);
      });
    }
    const a = [...new Set(ids(r.final))].sort().join("\n");
    const b = [...new Set(ids(r.seed_harness))].sort().join("\n");
    if (a !== b) ctx.addIssue({ code: "custom", message: "must hold the same tasks as final", path: ["seed_harness", "tasks"] });
    if (r.seed_harness.harness !== r.identity.measurement.harness)
      ctx.addIssue({
        code: "custom",
        message: "must be the seed harness of identity.measurement.harness",
        path: ["seed_harness", "harness"],
      });
  });
