import { createHash } from "node:crypto";
import { HoneError } from "../errors.ts";

export const HONE_VERSION = "0.1.0";

/**
 * What makes two measurements comparable: the task and its evaluator (content hash), the executor (endpoint kind
 * and model, dialect), sampling, budget, the harness (content hash) and the runtime's version. Kept apart from
 * cache keys (which hash exact requests) and recorded with every measurement.
 */
export interface IdentityParts {
  task: { id: string; content: string; metric: string; direction: string };
  executor: { endpoint: string; model: string; dialect: string };
  sampling: Record<string, unknown>;
  budget: { maxEvals: number; timeoutSec: number };
  harness: string;
  hone: string;
}

function canonical(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(",")}}`;
}

export function identityDigest(parts: IdentityParts): string {
  return createHash("sha256").update(canonical(parts)).digest("hex").slice(0, 32);
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
    else if (canonical(x) !== canonical(y)) out.push(`${p}: ${canonical(x)} ≠ ${canonical(y)}`);
  }
  return out;
}

/** Refuses to compare measurements whose identities differ in anything but the allowed components. */
export function assertComparable(a: IdentityParts, b: IdentityParts, allow: string[] = []): void {
  const diffs = identityDifferences(a, b).filter((d) => !allow.some((p) => d.startsWith(p)));
  if (diffs.length > 0)
    throw new HoneError("usage", `these measurements are not comparable; their identities differ in:\n  ${diffs.join("\n  ")}`);
}
