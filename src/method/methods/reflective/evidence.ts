import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import type { Candidate, TaskBrief } from "../../method.ts";
import { quoted } from "./fenced.ts";

/**
 * What a reflective method reads of a measured candidate: its rollout's trajectory (trajectory.jsonl, read bounded and
 * line by line; a line that is not JSON is skipped) reduced to what the executor did and what the evaluator said, and
 * the evaluator feedback hone collected. Only fields that replay identically go into prompts (no clock, no latency), so
 * a replayed run asks the proposer the same questions.
 */

const MAX_BYTES = 8 << 20;
const MAX_LINE = 1 << 20;

export interface EvaluationNote {
  index: number;
  valid: boolean;
  score: number | null;
  improved: boolean;
  reason?: string;
}

export interface RolloutNotes {
  start?: number | null;
  best?: number | null;
  improved?: boolean;
  stop?: string;
  evaluations: EvaluationNote[];
  /** Tool calls by name, in first-use order. */
  tools: Record<string, number>;
  /** Messages the middleware or runtime added (budget reminders, restarts), deduplicated. */
  notices: string[];
}

function readBounded(file: string): string {
  const size = statSync(file).size;
  const fd = openSync(file, "r");
  try {
    const n = Math.min(size, MAX_BYTES);
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, size - n);
    return buf.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function note(notes: RolloutNotes, e: Record<string, unknown>): void {
  if (e.type === "rollout_start") notes.start = num(e.start_score);
  else if (e.type === "evaluation")
    notes.evaluations.push({
      index: num(e.index) ?? notes.evaluations.length + 1,
      valid: e.valid === true,
      score: num(e.score),
      improved: e.improved === true,
      reason: typeof e.reason === "string" ? e.reason.slice(0, 400) : undefined,
    });
  else if (e.type === "assistant" && Array.isArray(e.tool_calls)) {
    for (const c of e.tool_calls as { function?: { name?: unknown } }[]) {
      const name = typeof c?.function?.name === "string" ? c.function.name.slice(0, 64) : "?";
      notes.tools[name] = (notes.tools[name] ?? 0) + 1;
    }
  } else if (e.type === "message" && (e.source === "middleware" || e.source === "runtime") && typeof e.content === "string") {
    const text = e.content.slice(0, 300);
    if (!notes.notices.includes(text) && notes.notices.length < 8) notes.notices.push(text);
  } else if (e.type === "rollout_end") {
    notes.best = num(e.best_score);
    notes.improved = e.improved === true;
    notes.stop = typeof e.stop_reason === "string" ? e.stop_reason.slice(0, 64) : undefined;
  }
}

/** A rollout's notes from its trajectory file; undefined when the file is missing. */
export function readRollout(file: string): RolloutNotes | undefined {
  if (!existsSync(file)) return undefined;
  const notes: RolloutNotes = { evaluations: [], tools: {}, notices: [] };
  for (const line of readBounded(file).split("\n")) {
    if (!line || line.length > MAX_LINE) continue;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (e && typeof e === "object" && !Array.isArray(e)) note(notes, e as Record<string, unknown>);
  }
  return notes;
}

/** The notes of every trajectory of a candidate's measurement (at most `max`). */
export function candidateRollouts(c: Candidate, max = 3): RolloutNotes[] {
  return (c.measured?.trajectories ?? [])
    .slice(0, max)
    .map(readRollout)
    .filter((n): n is RolloutNotes => n !== undefined);
}

const fmt = (x: number | null | undefined): string => (x === null || x === undefined ? "none" : String(x));

/** The executor's actions and the evaluator's answers, most recent `last` evaluations in full. */
export function outputsText(n: RolloutNotes, last = 12): string {
  const tools = Object.entries(n.tools)
    .map(([k, v]) => `${k}×${v}`)
    .join(", ");
  const evals = n.evaluations.slice(-last).map((e) => {
    const what = e.valid ? `valid, score ${fmt(e.score)}${e.improved ? " (new best)" : ""}` : "invalid";
    return `- evaluation ${e.index}: ${what}${e.reason ? `: ${quoted(e.reason, 400)}` : ""}`;
  });
  const skipped = n.evaluations.length - evals.length;
  return [
    `Tool calls: ${tools || "none"}`,
    `Evaluations (${n.evaluations.length}${skipped > 0 ? `, the last ${evals.length} shown` : ""}):`,
    ...(evals.length ? evals : ["- none"]),
  ].join("\n");
}

/** The outcome and the evaluator's feedback, as GEPA's "Feedback" and ACE's "environment feedback". */
export function feedbackText(c: Candidate, n: RolloutNotes | undefined, direction: string): string {
  const lines = [
    `Score (${direction}): ${fmt(c.measured?.score)}; the rollout started at ${fmt(n?.start)} and ${
      n?.improved ? `improved it to ${fmt(n.best)}` : "did not improve on it"
    }${n?.stop ? ` (stopped: ${n.stop})` : ""}.`,
  ];
  const invalid = n?.evaluations.filter((e) => !e.valid).length ?? 0;
  if (n) lines.push(`${invalid} of ${n.evaluations.length} evaluations were invalid.`);
  for (const f of (c.measured?.feedback ?? []).slice(0, 5)) lines.push(`Evaluator: ${quoted(f, 400)}`);
  for (const m of n?.notices ?? []) lines.push(`Harness notice: ${quoted(m, 300)}`);
  return lines.join("\n");
}

/** GEPA's reflective dataset for one candidate: one record per rollout (Inputs, Generated Outputs, Feedback). */
export function reflectiveRecords(c: Candidate, task: TaskBrief, max = 3): Record<string, string>[] {
  const rollouts = candidateRollouts(c, max);
  const inputs = `${quoted(task.description, 3000)}\n\nMetric: ${task.metric} (${task.direction}).`;
  if (rollouts.length === 0)
    return [
      { Inputs: inputs, "Generated Outputs": "(no trajectory recorded)", Feedback: feedbackText(c, undefined, task.direction) },
    ];
  return rollouts.map((n) => ({
    Inputs: inputs,
    "Generated Outputs": outputsText(n),
    Feedback: feedbackText(c, n, task.direction),
  }));
}

/** Records as GEPA renders them: "# Example i", then "## <field>" and its text. */
export function renderRecords(records: readonly Record<string, string>[]): string {
  return records
    .map((r, i) => [`# Example ${i + 1}`, ...Object.entries(r).map(([k, v]) => `## ${k}\n${v.trim()}\n`)].join("\n"))
    .join("\n\n");
}
