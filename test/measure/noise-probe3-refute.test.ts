import { describe, expect, it } from "vitest";
import { describeNoise, estimateNoise, needsAnotherRepeat, refuteDeterminism, reproduces } from "../../src/measure/noise.ts";

describe("the repeat rule and −0.0", () => {
  it("0 and −0 are one score: the records keep no sign of zero, so a resumed run must decide the same", () => {
    expect(JSON.parse(JSON.stringify(-0))).toBe(0); // what a resumed run reads back
    expect(needsAnotherRepeat([-0, 0], { repeats: 3 })).toBe(false);
    expect(estimateNoise([-0, 0], { repeats: 3 })).toMatchObject({ stochastic: false, basis: "measured", sd: 0 });
    expect(reproduces(0, [-0, -0, 0])).toBe(true);
  });
});

describe("refuting a measured deterministic evaluator", () => {
  const seed = estimateNoise([0, 0], { repeats: 3 });

  it("a re-evaluation that differs, or is invalid, refutes; equal ones confirm", () => {
    expect(seed).toMatchObject({ stochastic: false, basis: "measured" });
    expect(reproduces(1, [1, 1, 1])).toBe(true);
    expect(reproduces(1, [1, 0, 1])).toBe(false);
    expect(reproduces(1, [1, null, 1])).toBe(false);
    expect(reproduces(1e9, [0.7, 0.7, 0.7])).toBe(false);
  });

  it("the refuted noise is stochastic, with the spread of the disagreeing scores as its floor", () => {
    const r = refuteDeterminism(seed, [1, 0, 1, null]);
    expect(r).toMatchObject({ stochastic: true, basis: "refuted", spread: 1 });
    expect(r.sd).toBeCloseTo(Math.sqrt(1 / 3), 12); // sample sd of [1, 0, 1]
    expect(describeNoise({ ...r, repeats: 3 })).toMatch(
      /^stochastic \(the seed program's 2 evaluations agreed, but a re-evaluation of a candidate's program gave another score, sd 0\.5774, spread 1\)$/,
    );
  });
});
