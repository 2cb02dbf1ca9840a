import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { budgetProblems } from "../../src/compare/cell-settings.ts";
import { readExperiment } from "../../src/compare/experiment.ts";
import { hone } from "../helpers/cli.ts";
import { packingExperiment } from "../helpers/experiment.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";

// Two experiment files that passed validation and then failed mid-grid: a built-in method's params its schema refuses
// (exit 2 when the cell started, "bad parameters for greedy", after the other cells had run), and a budget too small
// for one round of proposals (exit 2 with "optimize(): rounds: a whole number from 1 to 1000", a message naming no
// field of the file). Both are now refused before anything is written, exit 5, naming the file and the field.

async function refused(text: string): Promise<{ stderr: string; out: string }> {
  const dir = tempDir("hone-probe6-preflight-");
  write(join(dir, "x.yaml"), text);
  const out = join(dir, "out");
  const r = await hone(["compare", join(dir, "x.yaml"), "--out", out], { timeoutMs: 120_000 });
  expect(r.code, r.stderr).toBe(5);
  expect(existsSync(out)).toBe(false);
  return { stderr: r.stderr, out };
}

describe("hone compare refuses up front what a cell would fail on", () => {
  it("a built-in method's bad params, naming methods.<i>.params", async () => {
    const { stderr } = await refused(packingExperiment("  - method: random\n  - method: greedy\n    params: { bogus: 1 }", 20));
    expect(stderr).toContain("x.yaml (methods.1.params): bad parameters for greedy:");
    expect(stderr).toContain('Unrecognized key: "bogus"');
  });

  it("a budget of evaluator calls smaller than one round of proposals, naming budget.size", async () => {
    const { stderr } = await refused(
      packingExperiment("  - method: random", 5, "search: { proposals: 2, max_evals: 3, noise_repeats: 1 }"),
    );
    expect(stderr).toContain(
      "x.yaml (budget.size): packing+initial+random: one round of 2 proposals takes at least 6 evaluator calls (2 rollouts × max_evals 3), more than the budget's 5",
    );
  });

  it("a QA row whose budget covers its fixed calls but no round, naming budget.size", async () => {
    const { stderr } = await refused(`name: q
benchmarks:
  - benchmark: gsm8k
    data_dir: ${join(ROOT, "test", "fixtures", "datasets")}
    splits: { train: { limit: 4 }, validation: { limit: 2 }, test: { limit: 2 } }
harnesses:
  - { name: qa, path: ${join(ROOT, "harnesses", "qa")} }
methods:
  - method: random
seeds: [0]
budget: { unit: evaluator_calls, size: 10 }
search: { proposals: 2 }
`);
    expect(stderr).toContain("(budget.size): gsm8k+qa+random:");
    expect(stderr).toContain("take 14 evaluator calls, more than the budget's 10");
  });

  it("a QA row is judged by its slices as loaded: a limit above the file's questions is no refusal", async () => {
    const dir = tempDir("hone-probe6-preflight-");
    write(
      join(dir, "q.yaml"),
      `name: q
benchmarks:
  - benchmark: gsm8k
    data_dir: ${join(ROOT, "test", "fixtures", "datasets")}
    splits: { train: { limit: 1000 }, validation: { limit: 4 }, test: { limit: 2 } }
harnesses:
  - { name: qa, path: ${join(ROOT, "harnesses", "qa")} }
methods:
  - method: random
seeds: [0]
budget: { unit: evaluator_calls, size: 1100 }
search: { proposals: 2 }
`,
    );
    const exp = readExperiment(join(dir, "q.yaml"));
    // 108 train and 4 validation questions as loaded: 112 fixed calls and 216 a round fit 1100.
    expect(await budgetProblems(exp, async () => ({ train: 108, validation: 4 }))).toEqual([]);
    const [tight] = await budgetProblems(exp, async () => ({ train: 600, validation: 4 }));
    expect(tight?.message).toContain("take 1804 evaluator calls, more than the budget's 1100");
  });
});
