import { beforeEach, describe, expect, it } from "vitest";
import { ratchet } from "../../src/loop/optimize-ratchet.ts";
import { rng } from "../../src/rng.ts";
import { loadNoise } from "../../src/store/noise.ts";
import { context, db, fresh, incCommit, incumbent, k0, ok, rollout } from "../helpers/ratchet-round.ts";

// An evaluator whose seed repeats agreed (the run measured it deterministic) must not promote a candidate on one
// score: a fair coin's two repeats agree half the time. The ratchet re-evaluates the would-be winner first.

beforeEach(fresh);

describe("a coin-flip evaluator that passed the seed's repeats as deterministic", () => {
  it("is promoted no more often than its re-evaluations all repeat the lucky score (1 in 8), not every time", async () => {
    let promoted = 0;
    let refuted = 0;
    const trials = 64;
    for (let t = 0; t < trials; t++) {
      if (t) await fresh();
      const coin = rng(1000 + t);
      const { ctx } = context(async () => ok(coin() < 0.5 ? 0 : 1));
      // The seed scored 0 twice; the candidate, a different program, drew a 1 in its rollout.
      rollout("OTHER", 1);
      const r = await ratchet(ctx, 1, incumbent(0), [k0()]);
      if (r.decisions.some((d) => d.decision === "promote")) promoted++;
      if (ctx.noise?.basis === "refuted") {
        refuted++;
        expect(ctx.noise.stochastic).toBe(true);
        expect(loadNoise(db, "run")).toMatchObject({ basis: "refuted", stochastic: 1 });
        expect(r.decisions[0]?.rule).toBe("welch_interval");
      }
    }
    // 3 re-evaluations all 1: 1/8 of the trials (8 expected of 64); without them every trial promoted.
    expect(promoted).toBeLessThan(trials * 0.25);
    expect(refuted).toBeGreaterThan(trials * 0.7);
  });

  it("a program that scores 1e9 on one lucky draw is not promoted, and the run turns stochastic", async () => {
    const { ctx, calls } = context(async () => ok(0.7));
    rollout("LUCKY", 1e9);
    const r = await ratchet(ctx, 1, incumbent(0.7), [k0()]);
    expect(r.decisions[0]).toMatchObject({ decision: "reject", rule: "welch_interval" });
    expect(r.next.commit).toBe(incCommit);
    expect(ctx.noise).toMatchObject({ stochastic: true, basis: "refuted" });
    expect(calls()).toBe(6); // its 3 re-evaluations (reused by the comparison) and the incumbent's 3
  });

  it("a deterministic evaluator is promoted by strictly_better once its score is reproduced, paying only those repeats", async () => {
    const { ctx, calls } = context(async (p) => ok(p === "BETTER" ? 0.8 : 0.7));
    rollout("BETTER", 0.8);
    const r = await ratchet(ctx, 1, incumbent(0.7), [k0()]);
    expect(r.decisions[0]).toMatchObject({ decision: "promote", rule: "strictly_better", score: 0.8 });
    expect(r.decisions[0]?.reason).toMatch(/reproduced by 3 re-evaluations/);
    expect(ctx.noise).toMatchObject({ stochastic: false, basis: "measured" });
    expect(loadNoise(db, "run")?.basis).toBe("measured");
    expect(calls()).toBe(3);
  });
});
