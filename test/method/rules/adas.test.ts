import { describe, expect, it } from "vitest";
import {
  type AdasState,
  adasAction,
  adasStep,
  archiveEntry,
  bootstrapFitness,
  type Design,
  fitnessText,
  percentile,
} from "../../../src/method/rules/adas.ts";
import { rng } from "../../../src/rng.ts";

// Fitness strings produced by ADAS's own bootstrap_confidence_interval (commit 2702bee, numpy 2.4.6, 100,000 resamples)
// on the same data in a scratch script outside the repository. The data are small and discrete, so the percentiles
// fall on the same values of the bootstrap distribution whatever the generator (e.g. [1,0,1,1]: the mean is k/4 with
// k ~ Binomial(4, 0.75), P(k ≤ 1) = 0.051 > 0.025, so the 2.5th percentile is 1/4).
const ADAS_OUTPUT: [string, number[], string][] = [
  ["1011", [1, 0, 1, 1], "95% Bootstrap Confidence Interval: (25.0%, 100.0%), Median: 75.0%"],
  ["constant", Array(10).fill(0.5), "95% Bootstrap Confidence Interval: (50.0%, 50.0%), Median: 50.0%"],
  ["one example", [1], "95% Bootstrap Confidence Interval: (100.0%, 100.0%), Median: 100.0%"],
  ["all wrong", [0, 0, 0], "95% Bootstrap Confidence Interval: (0.0%, 0.0%), Median: 0.0%"],
  [
    "128 halves",
    Array.from({ length: 128 }, (_, i) => (i % 2 ? 0 : 1)),
    "95% Bootstrap Confidence Interval: (41.4%, 58.6%), Median: 50.0%",
  ],
  ["mixed", [1, 0, 0, 1, 1, 1, 0, 1, 1, 1], "95% Bootstrap Confidence Interval: (40.0%, 100.0%), Median: 70.0%"],
];

describe("adas: bootstrap fitness", () => {
  it.each(ADAS_OUTPUT)("%s", (_name, data, expected) => {
    expect(bootstrapFitness(data, rng(1)).text).toBe(expected);
  });
  it("returns the numbers behind the string: median 0.75, interval [0.25, 1] for [1, 0, 1, 1]", () => {
    expect(bootstrapFitness([1, 0, 1, 1], rng(2))).toMatchObject({ median: 0.75, lower: 0.25, upper: 1 });
  });
  it("numpy's linear-interpolation percentile: [1, 2, 3, 4] at 50 → 2.5, at 2.5 → 1.075", () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([1, 2, 3, 4], 2.5)).toBeCloseTo(1.075, 12);
    expect(percentile([7], 97.5)).toBe(7);
  });
  it("formats one decimal with Python's rounding; no scores is refused", () => {
    expect(fitnessText(0.0625, 1, 0.5)).toBe("95% Bootstrap Confidence Interval: (6.2%, 100.0%), Median: 50.0%");
    expect(() => bootstrapFitness([], rng(1))).toThrow(/no scores/);
  });
});

const design = (name: string): Design => ({ name, thought: `t-${name}`, code: `def forward(): ${name}` });

/** Runs a generation's events through the machine and returns the actions it asked for. */
function run(events: Parameters<typeof adasStep>[1][], o?: { debugMax?: number }) {
  let s: AdasState = { at: "propose" };
  const actions = [adasAction(s)];
  for (const e of events) {
    s = adasStep(s, e, o);
    actions.push(adasAction(s));
  }
  return actions;
}

describe("adas: proposal, two reflections, up to three evaluations", () => {
  it("the happy path: propose → reflect 1 → reflect 2 → evaluate → archive the reflected design", () => {
    const a = run([
      { kind: "reply", design: design("p") },
      { kind: "reply", design: design("r1") },
      { kind: "reply", design: design("r2") },
      { kind: "evaluated", scores: [1, 0, 1] },
    ]);
    expect(a.map((x) => (x.do === "ask" ? x.purpose : x.do))).toEqual(["propose", "reflect1", "reflect2", "evaluate", "stop"]);
    expect(a.at(-1)).toEqual({ do: "stop", entry: { design: design("r2"), scores: [1, 0, 1] }, reason: "evaluated" });
  });
  it("an error, then all-zero accuracy, then a working debugged design: two debug calls, three evaluations", () => {
    const a = run([
      { kind: "reply", design: design("p") },
      { kind: "reply", design: design("r1") },
      { kind: "reply", design: design("r2") },
      { kind: "eval_error", message: "NameError: x" },
      { kind: "reply", design: design("d1") },
      { kind: "evaluated", scores: [0, 0] },
      { kind: "reply", design: design("d2") },
      { kind: "evaluated", scores: [1, 1] },
    ]);
    expect(a[4]).toEqual({ do: "ask", purpose: "debug", error: "NameError: x" });
    expect(a[6]).toEqual({ do: "ask", purpose: "debug", error: "All 0 accuracy" });
    expect(a.at(-1)).toEqual({ do: "stop", entry: { design: design("d2"), scores: [1, 1] }, reason: "evaluated" });
  });
  it("three failed evaluations end the generation without a fourth debug call; no entry without any scores", () => {
    const a = run([
      { kind: "reply", design: design("p") },
      { kind: "reply", design: design("r1") },
      { kind: "reply", design: design("r2") },
      { kind: "eval_error", message: "e1" },
      { kind: "reply", design: design("d1") },
      { kind: "eval_error", message: "e2" },
      { kind: "reply", design: design("d2") },
      { kind: "eval_error", message: "e3" },
    ]);
    expect(a.filter((x) => x.do === "evaluate")).toHaveLength(3);
    expect(a.at(-1)).toEqual({ do: "stop", reason: "no design passed after 3 evaluations: e3" });
  });
  it("all-zero scores are archived when no later attempt does better (the design that produced them)", () => {
    const a = run([
      { kind: "reply", design: design("p") },
      { kind: "reply", design: design("r1") },
      { kind: "reply", design: design("r2") },
      { kind: "evaluated", scores: [0, 0] },
      { kind: "reply", design: design("d1") },
      { kind: "eval_error", message: "boom" },
      { kind: "reply", design: design("d2") },
      { kind: "eval_error", message: "boom again" },
    ]);
    expect(a.at(-1)).toMatchObject({ do: "stop", entry: { design: design("r2"), scores: [0, 0] } });
  });
  it("a failed meta-agent call while proposing or reflecting loses the generation; while debugging, re-evaluates", () => {
    expect(run([{ kind: "llm_error", message: "429" }]).at(-1)).toEqual({ do: "stop", reason: "the meta agent failed: 429" });
    const a = run([
      { kind: "reply", design: design("p") },
      { kind: "reply", design: design("r1") },
      { kind: "reply", design: design("r2") },
      { kind: "eval_error", message: "e1" },
      { kind: "llm_error", message: "timeout" },
    ]);
    expect(a.at(-1)).toEqual({ do: "evaluate", design: design("r2"), attempt: 2 });
  });
  it("an empty score list ends the generation without an entry", () => {
    const a = run([
      { kind: "reply", design: design("p") },
      { kind: "reply", design: design("r1") },
      { kind: "reply", design: design("r2") },
      { kind: "evaluated", scores: [] },
    ]);
    expect(a.at(-1)).toEqual({ do: "stop", reason: "the evaluation returned no scores" });
  });
  it("events that cannot happen in a state are refused", () => {
    expect(() => adasStep({ at: "propose" }, { kind: "evaluated", scores: [1] })).toThrow(/waiting for the meta agent/);
  });
});

describe("adas: archive entries", () => {
  it("carry the fitness string and generation; debug_thought and reflection are dropped", () => {
    const f = bootstrapFitness([1, 0, 1, 1], rng(3));
    const e = archiveEntry({ ...design("x"), debug_thought: "d", reflection: "r" }, f, 4);
    expect(e).toEqual({
      ...design("x"),
      fitness: "95% Bootstrap Confidence Interval: (25.0%, 100.0%), Median: 75.0%",
      generation: 4,
    });
  });
});
