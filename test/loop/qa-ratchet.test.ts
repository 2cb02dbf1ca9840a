import { describe, expect, it } from "vitest";
import { clearsPairedNoise, type PerQuestion } from "../../src/loop/qa-noise.ts";
import { decideQA } from "../../src/loop/qa-ratchet.ts";
import { qaRoundRewards } from "../../src/loop/qa-rewards.ts";
import type { Archive, Candidate } from "../../src/method/method.ts";

// The QA keep rule and credit against values computed by hand from the formulas:
//   paired t: d_j = candidate_j − incumbent_j, promote iff mean(d) − t₀.₉₇₅(n−1)·sd(d)/√n > 0 (sd with n − 1);
//   reward: r = (score − b)/(1 − b), 3·tanh(r/3) when r > 0, else max(−1, r); advantage 0.7·LOO + 0.3·(softmax(r/τ) − 1/K).

const q = (scores: (number | null)[]): PerQuestion => Object.fromEntries(scores.map((s, i) => [`q${i}`, s]));

describe("the paired noise rule of a QA search (clearsPairedNoise)", () => {
  it("one more question right out of four is inside the noise: mean 0.25, sd 0.5, margin 3.182·0.5/2 = 0.7955", () => {
    const r = clearsPairedNoise(q([1, 0, 1, 0]), q([0, 0, 1, 0]), { noise: true });
    expect(r).toMatchObject({ rule: "paired_t_interval", better: false, n: 4, difference: 0.25 });
    expect(r.margin).toBeCloseTo(0.7955, 10);
    expect(r.interval[0]).toBeCloseTo(-0.5455, 10);
  });

  it("the same gain is promoted without the noise rule (noise_repeats 1: strictly better)", () => {
    const r = clearsPairedNoise(q([1, 0, 1, 0]), q([0, 0, 1, 0]), { noise: false });
    expect(r).toMatchObject({ rule: "strictly_better", better: true, difference: 0.25, margin: 0 });
  });

  it("a gain on every question has no variation: margin 0, and the sign test decides (4 of 4 is 1 in 8 by chance)", () => {
    const four = clearsPairedNoise(q([1, 1, 1, 1]), q([0, 0, 0, 0]), { noise: true });
    expect(four).toMatchObject({ better: false, difference: 1, margin: 0, interval: [1, 1] });
    expect(four.reason).toMatch(/above 0, but 4 of 4 differing questions gained: sign test p = 0\.125 ≥ 0\.05/);
    expect(clearsPairedNoise(q(Array(6).fill(1)), q(Array(6).fill(0)), { noise: true }).better).toBe(true);
  });

  it("four gains in ten and no loss: the t interval is above 0, but the exact sign test (McNemar's) over 4 is not", () => {
    const r = clearsPairedNoise(q([1, 1, 1, 1, 0, 0, 0, 0, 0, 0]), q(Array(10).fill(0)), { noise: true });
    expect(r.interval[0]).toBeCloseTo(0.4 - 0.369383, 5);
    expect(r.better).toBe(false);
  });

  it("several candidates in a round: the interval is Bonferroni-corrected over them", () => {
    // Twelve gains, three of 1 and nine of 0.05: mean 0.2875, sd 0.429654; alone t₀.₉₇₅(11) = 2.201 gives the lower
    // bound 0.014509 > 0, promoted; as one of three, t₀.₉₉₁₆₇(11) = 2.820034 (scipy.stats.t.ppf(1 − 0.05/6, 11))
    // gives −0.062270: not. The sign test (12 of 12, p = 0.000488) agrees at both levels.
    const gains = q([1, 1, 1, ...Array(9).fill(0.05)]);
    const alone = clearsPairedNoise(gains, q(Array(12).fill(0)), { noise: true });
    expect(alone.better).toBe(true);
    expect(alone.interval[0]).toBeCloseTo(0.014509, 5);
    const r = clearsPairedNoise(gains, q(Array(12).fill(0)), { noise: true, comparisons: 3 });
    expect(r.margin).toBeCloseTo((2.820034 * 0.429654) / Math.sqrt(12), 5);
    expect(r.better).toBe(false);
    expect(r.reason).toMatch(/98\.3333% \(Bonferroni over 3 candidates\)/);
  });

  it("six gains in ten: mean 0.6, sd √(2.4/9) = 0.516398, margin 2.262·0.516398/√10 = 0.369383, lower bound 0.230617 > 0", () => {
    const r = clearsPairedNoise(q([1, 1, 1, 1, 1, 1, 0, 0, 0, 0]), q(Array(10).fill(0)), { noise: true });
    expect(r.better).toBe(true);
    expect(r.difference).toBeCloseTo(0.6, 12);
    expect(r.margin).toBeCloseTo(0.369383, 6);
    expect(r.interval[0]).toBeCloseTo(0.230617, 6);
  });

  it("six gains and one loss in ten: mean 0.5, sd √(4.5/9) = 0.707107, margin 0.505799, lower bound −0.005799: not promoted", () => {
    const cand = q([1, 1, 1, 1, 1, 1, 0, 0, 0, 0]);
    const inc = q([0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    const r = clearsPairedNoise(cand, inc, { noise: true });
    expect(r.better).toBe(false);
    expect(r.difference).toBeCloseTo(0.5, 12);
    expect(r.margin).toBeCloseTo(0.505799, 6);
    expect(r.interval[0]).toBeCloseTo(-0.005799, 6);
  });

  it("pairs only questions both sides scored: an infrastructure failure on either side leaves the question out", () => {
    const r = clearsPairedNoise(q([1, 1, null, 1, 1, 1, 1, 1, 1]), q([0, 0, 0, null, 0, 0, 0, 0, 0]), { noise: true });
    expect(r).toMatchObject({ n: 7, difference: 1, better: true });
  });

  it("equal scores are never a gain; one pair cannot measure the noise; no pair is no comparison", () => {
    expect(clearsPairedNoise(q([1, 0]), q([1, 0]), { noise: false }).better).toBe(false);
    expect(clearsPairedNoise(q([1, 0]), q([1, 0]), { noise: true }).better).toBe(false);
    const one = clearsPairedNoise(q([1]), q([0]), { noise: true });
    expect(one).toMatchObject({ better: false, n: 1, margin: Number.POSITIVE_INFINITY });
    expect(clearsPairedNoise(q([null]), q([0]), { noise: true })).toMatchObject({ better: false, n: 0 });
  });
});

const cost = { evaluatorCalls: 0, executorTokens: 0, proposerCalls: 0, proposerTokens: 0, seconds: 0 };
function cand(id: string, round: number, perTask: (number | null)[] | null, kept = true): Candidate {
  const scores = perTask?.filter((s): s is number => s !== null) ?? [];
  return {
    id,
    parents: [],
    round,
    dir: `/x/${id}`,
    commit: `c-${id}`,
    status: perTask ? "measured" : "unmeasurable",
    reason: perTask ? undefined : "every task failed",
    measured: perTask
      ? {
          split: "train",
          score: scores.reduce((a, b) => a + b, 0) / scores.length,
          perTask: q(perTask),
          repeats: 1,
          feedback: [],
          trajectories: [],
        }
      : undefined,
    kept: { keep: kept, rule: kept ? "kept" : "keep_if_better", reason: kept ? "kept" : "not better" },
    cost,
  };
}

describe("a QA round's decisions (decideQA)", () => {
  const seed = cand("r00-seed", 0, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  const inc = { id: "r00-seed", commit: "c-r00-seed", dir: "/x/r00-seed", score: 0 };
  const archive: Archive = {
    direction: "maximize",
    candidates: [
      seed,
      cand("r01-k0", 1, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]), // +0.1: inside the noise
      cand("r01-k1", 1, [1, 1, 1, 1, 1, 1, 1, 0, 0, 0]), // +0.7: clears it (as one of three: 7 of 7, sign p 0.0156)
      cand("r01-k2", 1, [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]), // +0.9: clears it, best, but the method dropped it
      cand("r01-k3", 1, [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]), // +0.8: clears it and is the best kept
      cand("r01-k4", 1, null),
    ],
  };
  archive.candidates[3]!.kept = { keep: false, rule: "keep_if_better", reason: "not better than its parent" };

  it("promotes the best kept candidate that clears the noise; every other one is rejected or unmeasurable, with its rule", () => {
    const { decisions, winner } = decideQA(archive, 1, inc, (c) => c.kept?.keep === true, { noise: true });
    expect(winner?.id).toBe("r01-k3");
    const by = Object.fromEntries(decisions.map((d) => [d.candidate_id, [d.decision, d.rule]]));
    expect(by).toEqual({
      "r01-k0": ["reject", "paired_t_interval"],
      "r01-k1": ["reject", "paired_t_interval"],
      "r01-k2": ["reject", "keep_if_better"],
      "r01-k3": ["promote", "paired_t_interval"],
      "r01-k4": ["unmeasurable", "train_measurement"],
    });
    expect(decisions.find((d) => d.candidate_id === "r01-k1")?.reason).toMatch(/but r01-k3 scored higher/);
    expect(decisions.find((d) => d.candidate_id === "r01-k3")?.score).toBeCloseTo(0.8, 12);
  });

  it("three candidates with four gains in ten each: the best of three is what luck gives, none is promoted", () => {
    const four = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0];
    const three: Archive = {
      direction: "maximize",
      candidates: [
        seed,
        cand("r01-k0", 1, four),
        cand("r01-k1", 1, [...four].reverse()),
        cand("r01-k2", 1, four.slice(1).concat(1)),
      ],
    };
    const { decisions, winner } = decideQA(three, 1, inc, () => true, { noise: true });
    expect(winner).toBeUndefined();
    expect(decisions.map((d) => d.decision)).toEqual(["reject", "reject", "reject"]);
    expect(decisions[0]?.reason).toMatch(/Bonferroni over 3 candidates/);
  });

  it("without the noise rule the one-question gain counts too (and still loses to the best)", () => {
    const { decisions, winner } = decideQA(archive, 1, inc, () => true, { noise: false });
    expect(winner?.id).toBe("r01-k2");
    expect(decisions.find((d) => d.candidate_id === "r01-k0")).toMatchObject({ decision: "reject", rule: "strictly_better" });
  });
});

describe("harnessttt's credit on a QA round (qaRoundRewards)", () => {
  it("soft-capped rewards against accuracy 1 and the group's advantages, the refused slot charged −1", () => {
    // Incumbent 0.25; slot 0 scores 0.5: r = 0.25/0.75 = 1/3, reward 3·tanh(1/9) = 0.331968; slot 1 scores 0.25:
    // reward 0; slot 2 refused: −1. τ = 0.331968/4; LOO and softmax as in the header give the advantages.
    const a: Archive = {
      direction: "maximize",
      candidates: [cand("r01-k0", 1, [1, 1, 0, 0]), cand("r01-k1", 1, [1, 0, 0, 0])],
    };
    const rows = [
      { id: "r01-k0", slot: 0, status: "valid", commit_sha: "c-r01-k0", spec: null, gate_error: null },
      { id: "r01-k1", slot: 1, status: "valid", commit_sha: "c-r01-k1", spec: null, gate_error: null },
      { id: "r01-k2", slot: 2, status: "invalid", commit_sha: null, spec: null, gate_error: "bad" },
    ];
    const inc = { id: "r00-seed", commit: "c", dir: "/x", score: 0.25 };
    const credit = qaRoundRewards(a, rows, inc, undefined as never);
    const [r0, r1, r2] = credit.values as number[];
    expect(r0).toBeCloseTo(0.331968, 6);
    expect(r1).toBe(0);
    expect(r2).toBe(-1);
    const [a0, a1, a2] = credit.advantages as number[];
    expect(a0).toBeCloseTo(0.776982, 6);
    expect(a1).toBeCloseTo(0.139207, 6);
    expect(a2).toBeCloseTo(-0.916189, 6);
  });
});
