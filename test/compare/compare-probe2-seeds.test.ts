import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { readExperiment } from "../../src/compare/experiment.ts";
import { planCells } from "../../src/compare/plan.ts";
import { reportFolder } from "../../src/compare/report-folder.ts";
import { HoneError } from "../../src/errors.ts";
import { INITIAL_HARNESS, tempDir, write } from "../helpers/fixtures.ts";
import { cellRecord } from "./records.ts";

// `seeds: [0, 12345678901]` ran both seeds, and `hone compare` printed "1/1" seeds: the reader takes seed folders of
// at most ten digits, so the other finished seed was left out of every statistic without a word. Its test repeats
// also ran at seed·100 + r, beyond what the 32-bit generator tells apart. Seeds are now at most ten million.

function experimentWith(seeds: number[]): string {
  const dir = tempDir("hone-seeds-");
  const file = join(dir, "exp.yaml");
  write(
    file,
    stringify({
      name: "t",
      tasks: [{ name: "cp", splits: { train: ["circle-packing"] } }],
      harnesses: [{ name: "initial", path: INITIAL_HARNESS }],
      methods: [{ method: "random" }],
      seeds,
      budget: { unit: "evaluator_calls", size: 10 },
    }),
  );
  return file;
}

describe("seeds are ones the report can read back", () => {
  it("refuses a seed above ten million, naming it", () => {
    const file = experimentWith([0, 12_345_678_901]);
    expect(() => readExperiment(file)).toThrow(HoneError);
    try {
      readExperiment(file);
    } catch (err) {
      expect((err as HoneError).field).toBe("seeds.1");
      expect((err as HoneError).exit).toBe("badConfig");
    }
  });

  it("reads back the largest seed allowed", () => {
    const exp = readExperiment(experimentWith([0, 10_000_000]));
    const dirs = planCells(exp).map((c) => c.dir);
    expect(dirs).toEqual(["cp+initial+random/seed-0", "cp+initial+random/seed-10000000"]);
    const out = tempDir("hone-seeds-out-");
    for (const [i, seed] of [0, 10_000_000].entries())
      write(
        join(out, dirs[i] as string, "cell.json"),
        JSON.stringify(cellRecord({ benchmark: "cp", harness: "initial", method: "random", seed, final: [1] })),
      );
    expect(reportFolder(out).report.cells[0]?.seeds).toEqual([0, 10_000_000]);
  });
});
