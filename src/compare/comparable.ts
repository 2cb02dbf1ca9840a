import { type IdentityParts, identityDifferences } from "../measure/identity.ts";
import type { CellIdentity } from "./cell.ts";

// What each identity path means to a reader, longest prefix first.
const COMPONENTS: [string, string][] = [
  ["measurement.task.content", "task set content hash"],
  ["measurement.task.id", "task set"],
  ["measurement.task.metric", "scorer metric"],
  ["measurement.task.direction", "direction"],
  ["measurement.task.evaluator", "evaluator's Python and numpy"],
  ["measurement.task", "task set"],
  ["measurement.executor", "executor model"],
  ["measurement.sampling", "executor sampling"],
  ["measurement.budget", "per-rollout budget"],
  ["measurement.harness", "seed harness"],
  ["measurement.hone", "hone version"],
  ["proposer", "proposer model"],
  ["split", "split"],
  ["scorer", "scorer"],
  ["repeats", "repeats"],
  ["budget.unit", "budget unit"],
  ["budget.size", "budget size"],
  ["budget", "budget"],
];

/** The component a difference line ("path: a ≠ b") belongs to. */
export function componentOf(line: string): string {
  for (const [prefix, name] of COMPONENTS) if (line.startsWith(`${prefix}.`) || line.startsWith(`${prefix}:`)) return name;
  return "identity";
}

/** The evaluator's versions: named where cells differ in them (another machine, a numpy upgrade), never refused. */
const EVALUATOR = /^measurement\.task\.evaluator[.:]/;

/**
 * Where two cell identities differ, each line naming the component first: `budget size (budget.size: 40 ≠ 50)`.
 * Empty when they agree in everything but the evaluator's versions; any difference refuses a comparison.
 */
export function cellIdentityDifferences(a: CellIdentity, b: CellIdentity): string[] {
  // identityDifferences walks any nested record; a CellIdentity is IdentityParts with more components around it.
  return identityDifferences(a as unknown as IdentityParts, b as unknown as IdentityParts)
    .filter((d) => !EVALUATOR.test(d))
    .map((d) => `${componentOf(d)} (${d})`);
}

/** What names a cell × seed and its identity (a CellRecord). */
interface Measured {
  benchmark: string;
  harness: string;
  method: string;
  seed: number;
  identity: CellIdentity;
}

const runtimeText = (id: CellIdentity) => {
  const e = id.measurement.task.evaluator;
  if (!e) return "an evaluator whose versions were not recorded";
  const sandbox = e.sandbox === "none" ? ", without bubblewrap" : e.sandbox === "bubblewrap" ? ", under bubblewrap" : "";
  return `Python ${e.python}, numpy ${e.numpy ?? "not installed"}${sandbox}`;
};

/**
 * The evaluator versions the records were measured under, one line each, when they are not all the same (empty when
 * they are): which cells and seeds ran under which. Compared all the same; a reader weighs the difference.
 */
export function evaluatorDifferences(records: readonly Measured[]): string[] {
  const by = new Map<string, Map<string, number[]>>();
  for (const r of records) {
    const runtime = runtimeText(r.identity);
    const cells = by.get(runtime) ?? new Map<string, number[]>();
    const cell = `${r.benchmark}/${r.harness}/${r.method}`;
    cells.set(cell, [...(cells.get(cell) ?? []), r.seed]);
    by.set(runtime, cells);
  }
  if (by.size < 2) return [];
  return [...by].map(
    ([runtime, cells]) =>
      `${runtime}: ${[...cells].map(([cell, seeds]) => `${cell} (seed${seeds.length > 1 ? "s" : ""} ${seeds.sort((a, b) => a - b).join(", ")})`).join(", ")}`,
  );
}

/** The differences between the first identity and each of the others, without repeats. */
export function identityConflicts(ids: readonly CellIdentity[]): string[] {
  const [first, ...rest] = ids;
  if (!first) return [];
  return [...new Set(rest.flatMap((id) => cellIdentityDifferences(first, id)))];
}
