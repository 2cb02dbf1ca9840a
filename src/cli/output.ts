import { ExitCode, HoneError } from "../errors.ts";

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

/** Prints a user-facing error and returns its documented exit code. */
export function reportError(err: unknown): number {
  if (err instanceof HoneError) {
    process.stderr.write(`hone: ${err.message}\n`);
    return ExitCode[err.exit];
  }
  const e = err as Error;
  process.stderr.write(`hone: internal error: ${e?.stack ?? String(err)}\n`);
  return ExitCode.internal;
}
