import { oneLine } from "../printable.ts";
import type { PairedComparison } from "./paired.ts";
import type { CellSummary, CompareReport } from "./report.ts";

type Align = "left" | "right";
interface Column<T> {
  header: string;
  align: Align;
  value: (row: T) => string;
}

/** A fixed-width table: text columns padded right, numbers padded left so their digits line up; never wrapped. */
export function alignedTable<T>(columns: Column<T>[], rows: readonly T[]): string {
  const cells = rows.map((r) => columns.map((c) => c.value(r)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] as string).length)));
  const pad = (s: string, i: number) => {
    const w = widths[i] as number;
    return columns[i]?.align === "right" ? s.padStart(w) : s.padEnd(w);
  };
  const line = (r: string[]) => r.map(pad).join("  ").trimEnd();
  return [line(columns.map((c) => c.header)), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

/**
 * A score with four decimals (the same everywhere, so columns line up), one past 1e15 in magnitude as 1.2345e+308 (its
 * fixed form is all digits that mean nothing); "-" for none.
 */
export const num = (v: number | null | undefined) =>
  v === null || v === undefined || !Number.isFinite(v) ? "-" : Math.abs(v) >= 1e15 ? v.toExponential(4) : v.toFixed(4);
/** A count or an amount: whole numbers as they are, others with one decimal. */
export const amount = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));

const text = <T>(header: string, value: (r: T) => string): Column<T> => ({ header, align: "left", value });
const right = <T>(header: string, value: (r: T) => string): Column<T> => ({ header, align: "right", value });

const CELL_COLUMNS: Column<CellSummary>[] = [
  text("benchmark", (c) => c.benchmark),
  text("harness", (c) => c.harness),
  text("method", (c) => c.method),
  right("seeds", (c) => `${c.measured_seeds.length}/${c.seeds.length}`),
  right("test", (c) => num(c.mean)),
  right("95% CI lo", (c) => num(c.ci95?.[0])),
  right("hi", (c) => num(c.ci95?.[1])),
  right("seed harness", (c) => num(c.seed_harness.mean)),
  right("gain", (c) => num(c.gain.mean)),
  right("95% CI lo", (c) => num(c.gain.ci95?.[0])),
  right("hi", (c) => num(c.gain.ci95?.[1])),
  right("proposer calls", (c) => amount(c.cost.proposer_calls)),
  right("proposer tokens", (c) => amount(c.cost.proposer_tokens)),
  right("executor tokens", (c) => amount(c.cost.executor_tokens)),
  right("evaluator calls", (c) => amount(c.cost.evaluator_calls)),
  right("seconds", (c) => amount(c.cost.seconds)),
];

/** What a comparison concluded, in words. */
export function verdictText(c: PairedComparison): string {
  if (c.status === "refused") return "refused: identities differ";
  if (c.status === "no_baseline") return `no ${c.baseline} cell to compare with`;
  if (c.ci95 === null) return "no verdict (fewer than two pairs)";
  return c.verdict ?? "no verdict (interval includes 0)";
}

const COMPARISON_COLUMNS: Column<PairedComparison>[] = [
  text("benchmark", (c) => c.benchmark),
  text("harness", (c) => c.harness),
  text("method", (c) => c.method),
  right("pairs", (c) => (c.status === "compared" ? String(c.n) : "-")),
  right("mean difference", (c) => num(c.mean_difference)),
  right("95% CI lo", (c) => num(c.ci95?.[0])),
  right("hi", (c) => num(c.ci95?.[1])),
  text("verdict", verdictText),
];

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** The method's claims per split, as the mean over seeds: "train 0.5 (2 seeds), validation 1 (2 seeds)". */
function claimsText(c: CompareReport["cells"][number]): string {
  const by = new Map<string, number[]>();
  for (const m of c.method_reported) by.set(m.split ?? "unnamed split", [...(by.get(m.split ?? "unnamed split") ?? []), m.score]);
  return [...by.entries()]
    .map(([split, xs]) => `${split} ${num(xs.reduce((a, b) => a + b, 0) / xs.length)} (${plural(xs.length, "seed")})`)
    .join(", ");
}

// A QA cell with a flaky endpoint can have a question short of repeats per seed: the first few, then how many more.
const MAX_PARTIAL_NOTES = 5;
/** Cells × seeds named as not finished (a large grid stopped early plans thousands). */
const MAX_PENDING_NOTES = 20;

/**
 * A cell whose seeds spent more of the budget's unit than the budget on average: a round hone cannot bound in that
 * unit (a method program or agent asks its proposer as often as it likes) went past it, so the cell was not held to
 * the budget the others were.
 */
function overBudget(c: CellSummary): string | undefined {
  const spent = ({ ...c.cost } as Record<string, number | undefined>)[c.budget.unit];
  if (spent !== undefined && spent > c.budget.size)
    return `${c.cell}: spent ${amount(spent)} ${c.budget.unit} a seed on average, more than the budget of ${c.budget.size}: its rounds were not held to the budget (a round's spend in this unit is up to its method)`;
  // A mean within the budget can hide a seed past it (one seed at twice the budget, another at none).
  const seeds = c.over_budget ?? [];
  if (seeds.length === 0) return undefined;
  const which = seeds.map((s) => `${s.seed} (${amount(s.spent)})`).join(", ");
  return `${c.cell}: seed${seeds.length > 1 ? "s" : ""} ${which} spent more ${c.budget.unit} than the budget of ${c.budget.size}: ${seeds.length > 1 ? "their" : "its"} rounds were not held to the budget (a round's spend in this unit is up to its method)`;
}

/**
 * Everything a reader must know beside the numbers: refusals, left-out seeds and pairs, disclosures, pending cells. Each
 * note is one line with its control characters written as \uXXXX: task names, reasons and identity values come from
 * the cell records, which anyone with the folder could have written.
 */
export function reportNotes(r: CompareReport): string[] {
  return notesOf(r).map(oneLine);
}

function notesOf(r: CompareReport): string[] {
  const notes: string[] = (r.failed ?? []).map(
    (f) => `FAILED ${f.dir} (no result, left out of every statistic): ${f.error.split("\n")[0]}`,
  );
  for (const c of r.comparisons) {
    const what = `${c.benchmark}/${c.harness}: ${c.method} vs ${c.baseline}`;
    for (const d of c.differences) notes.push(`${what} not compared: ${d}`);
    if (c.left_out.invalid_pairs)
      notes.push(`${what}: ${plural(c.left_out.invalid_pairs, "task pair")} left out (a side without a valid result)`);
    if (c.left_out.seeds_unpaired.length)
      notes.push(`${what}: seeds ${c.left_out.seeds_unpaired.join(", ")} ran for only one of them`);
  }
  const evaluators = r.evaluator_differences ?? [];
  if (evaluators.length)
    notes.push(
      `measured under different evaluator versions (compared all the same; a numpy or Python version can change scores): ${evaluators.join("; ")}`,
    );
  for (const c of r.cells) {
    for (const d of c.identity_conflicts) notes.push(`${c.cell}: seeds measured differently, no statistics: ${d}`);
    for (const e of c.excluded) notes.push(`${c.cell}: seed ${e.seed} left out of the mean: ${e.reason}`);
    const partial = c.partial ?? [];
    for (const p of partial.slice(0, MAX_PARTIAL_NOTES))
      notes.push(`${c.cell}: seed ${p.seed}, ${p.side === "final" ? "final choice" : "seed harness"} on ${p.task}: ${p.reason}`);
    if (partial.length > MAX_PARTIAL_NOTES)
      notes.push(
        `${c.cell}: ${partial.length - MAX_PARTIAL_NOTES} more tasks scored on fewer repeats than made (--json lists them)`,
      );
    const over = overBudget(c);
    if (over) notes.push(over);
    if (c.test_seen_by_method) notes.push(`${c.cell}: the method searched on the test tasks (test-time discovery)`);
    if (c.test_split === "test-heldout")
      notes.push(`${c.cell}: measured on test-heldout, the test file without the search pool the method searched on`);
    const claims = claimsText(c);
    if (claims) notes.push(`${c.cell}: the method's own score of its choice (kept apart, never hone's): ${claims}`);
  }
  if (r.pending.length) {
    const more = r.pending.length > MAX_PENDING_NOTES ? ` and ${r.pending.length - MAX_PENDING_NOTES} more` : "";
    notes.push(`not finished (no cell.json yet): ${r.pending.slice(0, MAX_PENDING_NOTES).join(", ")}${more}`);
  }
  return notes;
}

/** The terminal report: the cells, the comparisons against the baseline, then the notes. */
export function reportText(r: CompareReport): string {
  const budgets = [...new Set(r.cells.map((c) => `${c.budget.size} ${c.budget.unit}`))];
  const parts = [
    `cells: test score of the final choice (mean over tasks, then over seeds; 95% t interval), gain over the seed harness (positive is better), mean cost per seed; budget ${budgets.join(" / ") || "(no cell finished yet)"}`,
    alignedTable(CELL_COLUMNS, r.cells),
    "",
    `paired differences against ${oneLine(r.baseline)}, per task and seed (${r.interval === "t" ? "Student t" : "paired bootstrap"} 95% interval; positive is better; a verdict only where the interval excludes 0)`,
    r.comparisons.length ? alignedTable(COMPARISON_COLUMNS, r.comparisons) : "(no other method to compare)",
  ];
  const notes = reportNotes(r);
  if (notes.length) parts.push("", "notes:", ...notes.map((n) => `  - ${n}`));
  return `${parts.join("\n")}\n`;
}
