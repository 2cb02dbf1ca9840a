import { describe, expect, it } from "vitest";
import { MeanWithConfidence, type Measurement, StrictPareto, type TaskStatus } from "../../src/method/criteria.ts";
import { rng } from "../../src/rng.ts";

const m = (statuses: TaskStatus[], steps = 1, tokens = 10): Measurement => ({
  commit: "x",
  tasks: Object.fromEntries(statuses.map((s, i) => [`t${i}`, { status: s, score: s === "solved" ? 1 : 0, steps, tokens }])),
});

describe("StrictPareto decision table", () => {
  const c = new StrictPareto();
  it.each([
    ["more solves promote", m(["solved", "solved", "unsolved"]), m(["solved", "unsolved", "unsolved"]), "promote", -1],
    [
      "any regression rejects, even with more solves",
      m(["unsolved", "solved", "solved"]),
      m(["solved", "unsolved", "unsolved"]),
      "reject",
      Number.POSITIVE_INFINITY,
    ],
    ["an exact tie rejects", m(["solved", "unsolved"]), m(["solved", "unsolved"]), "reject", 0],
    ["a tie won on steps promotes with loss -1/2", m(["solved", "unsolved"], 1), m(["solved", "unsolved"], 2), "promote", -0.5],
    ["a tie lost on steps rejects", m(["solved", "unsolved"], 3), m(["solved", "unsolved"], 2), "reject", 0.5],
    ["steps tied, tokens won: loss -1/4", m(["solved"], 2, 5), m(["solved"], 2, 9), "promote", -0.25],
  ])("%s", (_n, cand, base, decision, loss) => {
    const v = c.compare(cand, base);
    expect(v.decision).toBe(decision);
    expect(v.loss).toBe(loss);
  });

  it("the infra bracket: a verdict that flips is unmeasurable", () => {
    // With the infra task counted unsolved, the candidate regresses; counted solved, it gains: unmeasurable.
    const v = c.compare(m(["infra", "solved"]), m(["solved", "unsolved"]));
    expect(v.decision).toBe("unmeasurable");
  });
  it("the infra bracket: a verdict that holds both ways stands", () => {
    const v = c.compare(m(["infra", "solved", "solved"]), m(["unsolved", "unsolved", "unsolved"]));
    expect(v.decision).toBe("promote");
  });
  it("compares only tasks both measured", () => {
    const base = m(["solved"]);
    const cand: Measurement = {
      commit: "y",
      tasks: {
        t0: { status: "solved", score: 1, steps: 1, tokens: 1 },
        extra: { status: "unsolved", score: 0, steps: 1, tokens: 1 },
      },
    };
    expect(c.compare(cand, base).report.tasks).toBe(1);
  });
});

describe("MeanWithConfidence (paired bootstrap)", () => {
  const c = new MeanWithConfidence({ seed: 1, resamples: 2000 });
  it("promotes a consistent gain across tasks", () => {
    expect(c.compare(m(Array(12).fill("solved")), m(Array(12).fill("unsolved"))).decision).toBe("promote");
  });
  it("does not promote one lucky task on a small panel (StrictPareto would)", () => {
    const base = m(["unsolved", "unsolved", "unsolved", "unsolved", "unsolved"]);
    const cand = m(["solved", "unsolved", "unsolved", "unsolved", "unsolved"]);
    expect(new StrictPareto().compare(cand, base).decision).toBe("promote");
    const v = c.compare(cand, base);
    expect(v.decision).toBe("reject");
    expect(v.reason).toMatch(/not significant/);
  });
  it("rejects a consistent loss as worse", () => {
    expect(c.compare(m(Array(10).fill("unsolved")), m(Array(10).fill("solved"))).reason).toMatch(/worse/);
  });
  it("is unmeasurable with fewer than two comparable tasks, infra excluded", () => {
    expect(c.compare(m(["infra", "solved"]), m(["solved", "solved"])).decision).toBe("unmeasurable");
  });
  it("gives the same interval for the same seed", () => {
    const d = [0.1, -0.2, 0.3, 0.5, 0];
    expect(c.interval(d)).toEqual(new MeanWithConfidence({ seed: 1, resamples: 2000 }).interval(d));
  });
});

describe("MeanWithConfidence on small panels", () => {
  const c = new MeanWithConfidence({ seed: 1, resamples: 2000 });
  it("does not promote 2 of 2 or 4 of 4 gained tasks, which a fair coin gives 1 time in 2 or 8", () => {
    for (const n of [2, 4]) {
      const v = c.compare(m(Array(n).fill("solved")), m(Array(n).fill("unsolved")));
      expect(v.decision).toBe("reject");
      expect(v.reason).toMatch(/sign test p = /);
    }
    expect(c.compare(m(Array(6).fill("solved")), m(Array(6).fill("unsolved"))).decision).toBe("promote");
  });

  it("promotes noise no more often than its level: two-sided 95% is 2.5% for gains", () => {
    const random = rng(7);
    const score = () => Math.round(random() * 4) / 4;
    for (const n of [2, 3, 6]) {
      let promoted = 0;
      const trials = 1500;
      for (let i = 0; i < trials; i++) {
        const panel = (xs: number[]): Measurement => ({
          commit: "x",
          tasks: Object.fromEntries(
            xs.map((s, j) => [`t${j}`, { status: s > 0.5 ? "solved" : "unsolved", score: s, steps: 1, tokens: 1 }]),
          ),
        });
        const same = Array.from({ length: n }, score);
        if (
          new MeanWithConfidence({ seed: i }).compare(panel(Array.from({ length: n }, score)), panel(same)).decision === "promote"
        )
          promoted++;
      }
      expect(promoted / trials).toBeLessThanOrEqual(0.025);
    }
  });
});
