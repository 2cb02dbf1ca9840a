import { describe, expect, it } from "vitest";
import { modelCallSummary, OptimizeProgress } from "../../src/cli/progress.ts";
import type { OptimizeEvent } from "../../src/loop/optimize.ts";

/** A stream that keeps what was written. */
function sink() {
  const chunks: string[] = [];
  return { write: (c: string) => chunks.push(c) > 0, text: () => chunks.join("") } as unknown as NodeJS.WritableStream & {
    text(): string;
  };
}

const start: OptimizeEvent = {
  type: "start",
  runDir: "/runs/x",
  resumed: false,
  task: "circle-packing",
  rounds: 1,
  paired: false,
  maxEvals: 3,
};
const rollout = (job: string, event: Record<string, unknown>): OptimizeEvent => ({ type: "rollout_event", round: 1, job, event });
const evaluation = (job: string, score: number | null) => rollout(job, { type: "evaluation", valid: score !== null, score });

describe("the optimize progress line", () => {
  it("moves during a round: rollouts running and done, evaluations of the budget, the best score so far", () => {
    const p = new OptimizeProgress(true, { out: sink() });
    for (const e of [
      start,
      { type: "round_start", round: 1, incumbentScore: 1 },
      { type: "proposals", round: 1, valid: 1, repaired: 1, invalid: 1 },
    ] as OptimizeEvent[])
      p.on(e);
    expect(p.status()).toBe("round 1 · rollouts 0 running, 0 done of 2 · evaluations 0/6 · best 1.00000");
    p.on(rollout("r01-k0", { type: "rollout_start", task: { direction: "maximize" } }));
    p.on(rollout("r01-k1", { type: "rollout_start", task: { direction: "maximize" } }));
    p.on(evaluation("r01-k0", 1.2));
    p.on(evaluation("r01-k1", null));
    expect(p.status()).toBe("round 1 · rollouts 2 running, 0 done of 2 · evaluations 2/6 · best 1.20000");
    p.on({ type: "rollout_done", round: 1, job: "r01-k0", score: 1.2 });
    p.on(rollout("r01-k1", { type: "model_call", cached: true }));
    expect(p.status()).toBe(
      "round 1 · rollouts 1 running, 1 done of 2 · evaluations 2/6 · best 1.20000 · 1 of 1 executor calls from the cache",
    );
  });

  it("follows the task's direction, and a paired parent's scores never move the best", () => {
    const p = new OptimizeProgress(false, { out: sink() });
    p.on({ ...start, paired: true } as OptimizeEvent);
    p.on({ type: "round_start", round: 1, incumbentScore: 0.5 });
    p.on({ type: "proposals", round: 1, valid: 2, repaired: 0, invalid: 0 });
    p.on(rollout("r01-k0", { type: "rollout_start", task: { direction: "minimize" } }));
    p.on(evaluation("r01-k0", 0.7));
    p.on(evaluation("r01-k0-parent", 0.1));
    expect(p.status()).toMatch(/done of 4 · evaluations 2\/12 · best 0.500000$/);
    p.on(evaluation("r01-k0", 0.4));
    expect(p.status()).toMatch(/best 0.400000$/);
  });

  it("prints plain lines, and no redraws, when stdout is not a terminal", () => {
    const out = sink();
    const p = new OptimizeProgress(false, { out, cache: "/c/requests.db" });
    p.on(start);
    p.on({ type: "round_start", round: 0, incumbentScore: 0.9 });
    p.on(rollout("r00-seed", { type: "rollout_start", task: { direction: "maximize" } }));
    p.on(rollout("r00-seed", { type: "model_call", cached: true }));
    p.on(rollout("r00-seed", { type: "model_call", cached: true }));
    p.on(evaluation("r00-seed", 1));
    p.on({ type: "rollout_done", round: 0, job: "r00-seed", score: 1 });
    p.end();
    expect(out.text()).not.toMatch(/[\r\x1b]/);
    expect(out.text().split("\n")).toEqual([
      "optimizing circle-packing for 1 round(s) in /runs/x",
      "round 0: incumbent 0.900000 (seed program; rolling out the seed harness)",
      "  note: model calls are being answered from the request cache /c/requests.db, where earlier runs recorded the same requests (--cache off calls the model afresh)",
      "  r00-seed: best 1.00000",
      "",
    ]);
  });

  it("cuts the status line to the terminal's width so it can be redrawn in place", () => {
    const out = Object.assign(sink(), { columns: 40 });
    const p = new OptimizeProgress(true, { out });
    p.on(start);
    p.on({ type: "round_start", round: 0, incumbentScore: 0.9 });
    const last = out.text().split("\n").at(-1) as string;
    expect(last.length).toBeLessThan(40);
    expect(last.endsWith("…")).toBe(true);
  });
});

describe("the model-call summary", () => {
  const models = (hits: number) => [
    { role: "executor", calls: 10, cache_hits: hits },
    { role: "proposer", calls: 2, cache_hits: Math.min(hits, 2) },
  ];

  it("says how many calls came from the cache", () => {
    expect(modelCallSummary(models(3), { mode: "read-write", path: "/c/requests.db" })).toEqual([
      "  model calls  executor 10 (3 from the cache), proposer 2 (2 from the cache)",
    ]);
  });

  it("says plainly when every call was answered by the shared cache", () => {
    const lines = modelCallSummary(models(10), { mode: "read-write", path: "/c/requests.db" });
    expect(lines[1]).toMatch(/every model call of this run was answered from the request cache \/c\/requests.db/);
    expect(modelCallSummary(models(10), { mode: "replay", path: "/c/requests.db" })).toHaveLength(1);
  });
});
