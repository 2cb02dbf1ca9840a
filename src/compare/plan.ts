import type { Experiment } from "./experiment.ts";

/** One cell × seed of the grid: which benchmark, harness, method and seed, and its folder under the experiment's out. */
export interface PlannedCell {
  /** `<benchmark>+<harness>+<method>`: the cell's folder and its key in the report. */
  cell: string;
  benchmark: string;
  harness: string;
  method: string;
  seed: number;
  /** `<cell>/seed-<n>`, relative to the experiment's out folder: the cell × seed's run directory (cell.json in it). */
  dir: string;
  /** Whether the method's splits include test tasks (test-time discovery); the report discloses it. */
  test_seen_by_method: boolean;
}

export const cellName = (benchmark: string, harness: string, method: string) => `${benchmark}+${harness}+${method}`;
export const seedDir = (seed: number) => `seed-${seed}`;

interface Axis {
  name: string;
  harnesses?: string[];
  testSeen: boolean;
}

function axes(exp: Experiment): Axis[] {
  const qa = exp.benchmarks.map((b) => ({ name: b.name ?? b.benchmark, harnesses: b.harnesses, testSeen: false }));
  const discovery = exp.tasks.map((t) => {
    const seen = new Set([...t.splits.train, ...(t.splits.validation ?? [])]);
    const test = t.splits.test ?? t.splits.train;
    return { name: t.name, harnesses: t.harnesses, testSeen: test.some((x) => seen.has(x)) };
  });
  return [...qa, ...discovery];
}

/** Every cell × seed of the experiment, benchmark-major, in the file's order. */
export function planCells(exp: Experiment): PlannedCell[] {
  const out: PlannedCell[] = [];
  for (const b of axes(exp))
    for (const h of exp.harnesses) {
      if (b.harnesses && !b.harnesses.includes(h.name)) continue;
      for (const m of exp.methods) {
        const method = m.name ?? m.method;
        if (h.methods && !h.methods.includes(method)) continue;
        const cell = cellName(b.name, h.name, method);
        for (const seed of exp.seeds)
          out.push({
            cell,
            benchmark: b.name,
            harness: h.name,
            method,
            seed,
            dir: `${cell}/${seedDir(seed)}`,
            test_seen_by_method: b.testSeen,
          });
      }
    }
  return out;
}
