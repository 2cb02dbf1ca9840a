import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CellRecord } from "../../src/compare/cell.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";

// One budget for every cell: ace and skillopt make one proposal a round whatever K is, so a budget of evaluator calls
// planned as K rollouts a round gave them a third of what random spent (11 of 29 calls here). Each method now plans its
// rounds with the proposals it makes, and every cell spends the same calls.
const EXPERIMENT = `name: fair
tasks:
  - name: packing
    splits:
      train: [circle-packing]
harnesses:
  - name: initial
    path: ${join(ROOT, "harnesses", "initial")}
methods:
  - method: random
  - method: ace
  - method: skillopt
  - method: greedy
    params: { proposals: 2 }
seeds: [0]
executor: { model: offline }
proposer: { model: offline }
# Round 0: the seed's one evaluation and a rollout of 3 calls; a round of 4 proposals: up to 12 more. Without noise
# repeats no promotion is confirmed by re-evaluations, so every round spends exactly its rollouts' calls.
budget: { unit: evaluator_calls, size: 28 }
search: { proposals: 4, max_evals: 3, noise_repeats: 1, concurrency: 2 }
repeats: 1
`;

describe("a budget of evaluator calls is the same for every method", () => {
  it("methods that make fewer than K proposals a round spend the budget as random does", async () => {
    const dir = tempDir();
    write(join(dir, "fair.yaml"), EXPERIMENT);
    const out = join(dir, "out");
    const r = await hone(["compare", join(dir, "fair.yaml"), "--out", out, "--json"], { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const spent = (method: string) =>
      (JSON.parse(readFileSync(join(out, `packing+initial+${method}`, "seed-0", "cell.json"), "utf8")) as CellRecord).cost
        .evaluator_calls;
    expect(spent("random")).toBe(28);
    for (const m of ["ace", "skillopt", "greedy"]) expect(spent(m), m).toBe(spent("random"));
  }, 300_000);
});
