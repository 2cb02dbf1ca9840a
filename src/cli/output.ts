import { join } from "node:path";
import { ExitCode, HoneError } from "../errors.ts";
import { ModelError, type ModelFailureKind } from "../model/errors.ts";

export const isTty = () => Boolean(process.stdout.isTTY);

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A fixed-width text table; columns sized to their widest cell. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...cells.slice(1).map(line)].join("\n");
}

export function formatScore(v: number | null | undefined): string {
  if (v === null || v === undefined) return "-";
  return Math.abs(v) >= 1000 ? v.toFixed(2) : v.toPrecision(6);
}

/** Model failures that mean the endpoint itself is wrong: unreachable, key refused, unknown model (exit 6). */
const ENDPOINT_KINDS: ReadonlySet<ModelFailureKind> = new Set([
  "unreachable",
  "unauthorized",
  "unknown_model",
  "no_tool_support",
]);

/** Prints a user-facing error and returns its documented exit code. */
export function reportError(err: unknown): number {
  if (err instanceof HoneError) {
    process.stderr.write(`hone: ${err.message}\n`);
    return ExitCode[err.exit];
  }
  if (err instanceof ModelError) {
    // A model call that failed where no run code turned it into a HoneError (a proposer's --cache replay miss, say):
    // the endpoint's fault (6) or the run's (7), as the README's table says, never "a bug".
    process.stderr.write(`hone: ${err.message}\n`);
    return ENDPOINT_KINDS.has(err.kind) ? ExitCode.endpoint : ExitCode.runFailed;
  }
  const e = err as Error;
  process.stderr.write(`hone: internal error: ${e?.stack ?? String(err)}\n`);
  return ExitCode.internal;
}

/**
 * Reads a run's records with `read`. A hone.db that SQLite cannot read (damaged, truncated, not a database) or whose
 * stored settings are not JSON is the user's to know about, naming the file (exit 2, as `hone replay` refuses one),
 * never "an internal error".
 */
export async function readRunRecords<T>(dir: string, read: () => T | Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    const e = err as { code?: unknown; message?: string };
    // Damage only (a lock or an I/O error is not the records' fault and keeps its own message)
    const sqlite = typeof e.code === "string" && /^SQLITE_(NOTADB|CORRUPT|ERROR)/.test(e.code);
    if (!sqlite && !(err instanceof SyntaxError)) throw err;
    throw new HoneError(
      "usage",
      `${join(dir, "hone.db")} is not a readable hone run database (${String(e.message).slice(0, 120)}); the run's records are damaged`,
    );
  }
}
