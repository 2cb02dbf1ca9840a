import { beforeEach, describe, expect, it } from "vitest";
import { repeatsOf } from "../../src/loop/optimize-noise.ts";
import { ratchet } from "../../src/loop/optimize-ratchet.ts";
import { sha256 } from "../../src/runtime/discovery-env.ts";
import { insertNoiseEvaluation, loadNoise, noiseEvaluations } from "../../src/store/noise.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { context, db, fresh, incCommit, incumbent, k0, ok, rollout, timedOut } from "../helpers/ratchet-round.ts";

// The re-evaluations that confirm a measured deterministic evaluator's would-be winner: made at once on the evaluator
// (not one after another: with 360 s timeouts a promoting round waited up to 18 min), and a timeout, which says how
// loaded the machine was and nothing of the program's score, never turns the run stochastic for good.

beforeEach(fresh);

const crashed = (): Evaluation => ({
  valid: false,
  reason: "Traceback: ZeroDivisionError",
  metrics: {},
  artifacts: {},
  seconds: 0,
});

/** An evaluator that answers on the next turn of the event loop, noting how many calls were running at once. */
function overlapping(answer: (p: string) => Evaluation) {
  let running = 0;
  let most = 0;
  const evaluate = async (p: string) => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 5));
    running--;
    return answer(p);
  };
  return { evaluate, most: () => most };
}

describe("confirming a measured deterministic evaluator's winner", () => {
  it("re-evaluates the winner's program N times at once, not one after another", async () => {
    const e = overlapping((p) => ok(p === "BETTER" ? 0.8 : 0.7));
    const { ctx, calls } = context(e.evaluate);
    rollout("BETTER", 0.8);
    const r = await ratchet(ctx, 1, incumbent(0.7), [k0()]);
    expect(r.decisions[0]).toMatchObject({ decision: "promote", rule: "strictly_better" });
    expect(calls()).toBe(3);
    expect(e.most()).toBe(3);
    expect(noiseEvaluations(db, "run", 1, sha256("BETTER")).map((x) => x.idx)).toEqual([0, 1, 2]);
  });

  it("a stochastic comparison's repeats run at once too, and a round killed midway measures only the missing ones", async () => {
    const e = overlapping(() => ok(0.5));
    const { ctx, calls } = context(e.evaluate);
    // Repeats 0 and 2 were recorded before the kill; 1 was still running.
    for (const idx of [0, 2])
      insertNoiseEvaluation(db, "run", 1, sha256("P"), {
        idx,
        purpose: "incumbent",
        valid: 1,
        score: 0.5,
        reason: null,
        seconds: 0,
        result: JSON.stringify(ok(0.5)),
      });
    const got = await repeatsOf(ctx, 1, "P", "incumbent", 3);
    expect(got.map((x) => x.score)).toEqual([0.5, 0.5, 0.5]);
    expect(calls()).toBe(1);
    expect(noiseEvaluations(db, "run", 1, sha256("P")).map((x) => x.idx)).toEqual([0, 1, 2]);
    const more = await repeatsOf(ctx, 1, "Q", "candidate", 4);
    expect(more).toHaveLength(4);
    expect(e.most()).toBe(4);
  });

  it("a re-evaluation that timed out does not refute: the others confirm the score", async () => {
    let n = 0;
    const { ctx } = context(async (p) => (p === "BETTER" && n++ === 0 ? timedOut() : ok(p === "BETTER" ? 0.8 : 0.7)));
    rollout("BETTER", 0.8);
    const r = await ratchet(ctx, 1, incumbent(0.7), [k0()]);
    expect(r.decisions[0]).toMatchObject({ decision: "promote", rule: "strictly_better", score: 0.8 });
    expect(ctx.noise).toMatchObject({ stochastic: false, basis: "measured" });
    expect(loadNoise(db, "run")).toMatchObject({ basis: "measured", stochastic: 0 });
  });

  it("when every re-evaluation timed out, nothing is promoted on one score and the run stays deterministic", async () => {
    const { ctx } = context(async (p) => (p === "BETTER" ? timedOut() : ok(0.7)));
    rollout("BETTER", 0.8);
    const r = await ratchet(ctx, 1, incumbent(0.7), [k0()]);
    expect(r.decisions[0]).toMatchObject({ decision: "reject", rule: "strictly_better" });
    expect(r.decisions[0]?.reason).toMatch(/all 3 re-evaluations confirming it timed out: not promoted on one score/);
    expect(r.next.commit).toBe(incCommit);
    expect(r.bestScore).toBeNull();
    expect(loadNoise(db, "run")).toMatchObject({ basis: "measured", stochastic: 0 });
  });

  it("an invalid re-evaluation that is not a timeout (the program crashed) still refutes", async () => {
    let n = 0;
    const { ctx } = context(async (p) => (p === "BETTER" && n++ === 0 ? crashed() : ok(p === "BETTER" ? 0.8 : 0.7)));
    rollout("BETTER", 0.8);
    const r = await ratchet(ctx, 1, incumbent(0.7), [k0()]);
    expect(ctx.noise).toMatchObject({ stochastic: true, basis: "refuted" });
    expect(r.decisions[0]).toMatchObject({ decision: "reject", rule: "welch_interval" });
  });
});
