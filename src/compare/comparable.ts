import { type IdentityParts, identityDifferences } from "../measure/identity.ts";
import type { CellIdentity } from "./cell.ts";

// What each identity path means to a reader, longest prefix first.
const COMPONENTS: [string, string][] = [
  ["measurement.task.content", "task set content hash"],
  ["measurement.task.id", "task set"],
  ["measurement.task.metric", "scorer metric"],
  ["measurement.task.direction", "direction"],
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

/**
 * Where two cell identities differ, each line naming the component first: `budget size (budget.size: 40 ≠ 50)`.
 * Empty when they agree in everything; any difference refuses a comparison (none is allowed to differ).
 */
export function cellIdentityDifferences(a: CellIdentity, b: CellIdentity): string[] {
  // identityDifferences walks any nested record; a CellIdentity is IdentityParts with more components around it.
  return identityDifferences(a as unknown as IdentityParts, b as unknown as IdentityParts).map((d) => `${componentOf(d)} (${d})`);
}

/** The differences between the first identity and each of the others, without repeats. */
export function identityConflicts(ids: readonly CellIdentity[]): string[] {
  const [first, ...rest] = ids;
  if (!first) return [];
  return [...new Set(rest.flatMap((id) => cellIdentityDifferences(first, id)))];
}
