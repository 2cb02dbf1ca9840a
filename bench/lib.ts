/** Small helpers shared by the benchmarks: timing, medians and aligned output. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export async function timeIt(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

export function report(title: string, rows: [string, string][], verdict?: { ok: boolean; text: string }): void {
  const w = Math.max(...rows.map((r) => r[0].length));
  console.log(`\n## ${title}`);
  for (const [k, v] of rows) console.log(`  ${k.padEnd(w)}  ${v}`);
  if (verdict) console.log(`  ${verdict.ok ? "PASS" : "MISS"}  ${verdict.text}`);
}

export const ms = (x: number) => `${x.toFixed(3)} ms`;
