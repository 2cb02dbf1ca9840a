import { createHash } from "node:crypto";
import { canonicalJson } from "../canonical-json.ts";
import { HoneError } from "../errors.ts";

export { HONE_VERSION } from "../version.ts";

/**
 * What makes two measurements comparable: the task and its evaluator (content hash), the executor (endpoint kind
 * and model, dialect), sampling, budget, the harness (content hash) and the runtime's version. Kept apart from
 * cache keys (which hash exact requests) and recorded with every measurement.
 */
export interface IdentityParts {
  /** `evaluator`: the evaluator's Python and numpy versions and its sandbox, where known (runs recorded before had none). */
  task: {
    id: string;
    content: string;
    metric: string;
    direction: string;
    evaluator?: { python: string; numpy: string | null; sandbox?: "bubblewrap" | "none" };
  };
  executor: { endpoint: string; model: string; dialect: string };
  sampling: Record<string, unknown>;
  budget: { maxEvals: number; timeoutSec: number };
  harness: string;
  hone: string;
}

export function identityDigest(parts: IdentityParts): string {
  return createHash("sha256").update(canonicalJson(parts)).digest("hex").slice(0, 32);
}

/** The components that differ between two identities, as "path: a ≠ b" lines. */
export function identityDifferences(a: IdentityParts, b: IdentityParts, path = ""): string[] {
  const out: string[] = [];
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  for (const k of keys) {
    const x = (a as unknown as Record<string, unknown>)?.[k];
    const y = (b as unknown as Record<string, unknown>)?.[k];
    const p = path ? `${path}.${k}` : k;
    if (x && y && typeof x === "object" && typeof y === "object")
      out.push(...identityDifferences(x as IdentityParts, y as IdentityParts, p));
    else if (canonicalJson(x) !== canonicalJson(y)) out.push(`${p}: ${canonicalJson(x)} ≠ ${canonicalJson(y)}`);
  }
  return out;
}

/** Refuses to compare measurements whose identities differ in anything but the allowed components. */
export function assertComparable(a: IdentityParts, b: IdentityParts, allow: string[] = []): void {
  const diffs = identityDifferences(a, b).filter((d) => !allow.some((p) => d.startsWith(p)));
  if (diffs.length > 0)
    throw new HoneError("usage", `these measurements are not comparable; their identities differ in:\n  ${diffs.join("\n  ")}`);
}
