import { describe, expect, it } from "vitest";
import {
  childrenCounts,
  chooseParents,
  chooseTarget,
  compiled,
  type DgmEntry,
  fullEvalThreshold,
  keepChild,
  nextStage,
  parentProbabilities,
  sigmoidScore,
} from "../../../src/method/rules/dgm.ts";
import { rng } from "../../../src/rng.ts";

// initial (0.5) has children a and b; a (0.6) has child c; b (0.3) and c (0.9) have none.
const ARCHIVE: DgmEntry[] = [
  { id: "initial", parent: null, score: 0.5 },
  { id: "a", parent: "initial", score: 0.6 },
  { id: "b", parent: "initial", score: 0.3 },
  { id: "c", parent: "a", score: 0.9 },
];

describe("dgm: parent selection", () => {
  it("sigmoid(10(s − 0.5)): 0.5 → 0.5, 0.6 → 0.7310585786300049 (computed with Python's math.exp)", () => {
    expect(sigmoidScore(0.5)).toBe(0.5);
    expect(sigmoidScore(0.6)).toBeCloseTo(0.7310585786300049, 15);
    expect(sigmoidScore(0.3)).toBeCloseTo(0.11920292202211755, 15);
  });
  it("children are counted from the archive's parent links", () => {
    expect(Object.fromEntries(childrenCounts(ARCHIVE))).toEqual({ initial: 2, a: 1, b: 0, c: 0 });
  });
  it("score_child_prop: p ∝ sigmoid/(1 + children) (values from DGM's formula evaluated in Python)", () => {
    const p = parentProbabilities(ARCHIVE, "score_child_prop");
    const expected = [0.10203586021313522, 0.22378257281011352, 0.07297783613067627, 0.6012037308460749];
    p.forEach((x, i) => {
      expect(x).toBeCloseTo(expected[i] as number, 14);
    });
  });
  it("score_prop ignores children; random is uniform", () => {
    const expected = [0.21438292554738217, 0.3134529536664228, 0.051110142313796056, 0.42105397847239906];
    parentProbabilities(ARCHIVE, "score_prop").forEach((x, i) => {
      expect(x).toBeCloseTo(expected[i] as number, 14);
    });
    expect(parentProbabilities(ARCHIVE, "random")).toEqual([0.25, 0.25, 0.25, 0.25]);
  });
  it("draws k parents with replacement, by the cumulative probabilities", () => {
    const draws = [0.05, 0.2, 0.99];
    expect(chooseParents(ARCHIVE, 3, "score_child_prop", () => draws.shift() as number)).toEqual(["initial", "a", "c"]);
    const many = chooseParents(ARCHIVE, 2000, "score_child_prop", rng(3));
    expect(many.filter((id) => id === "c").length / 2000).toBeCloseTo(0.601, 1);
  });
  it("best: the k highest scores (not the k lowest the upstream sort takes), padded by repeats when k > archive", () => {
    expect(chooseParents(ARCHIVE, 2, "best", rng(1))).toEqual(["c", "a"]);
    const padded = chooseParents(ARCHIVE.slice(0, 1), 3, "best", rng(1));
    expect(padded).toEqual(["initial", "initial", "initial"]);
  });
  it("no_darwin: always the newest entry; an empty archive gives no parent", () => {
    expect(chooseParents(ARCHIVE, 2, "no_darwin", rng(1))).toEqual(["c"]);
    expect(chooseParents([], 2, "score_child_prop", rng(1))).toEqual([]);
  });
  it("one entry gets probability 1", () => {
    expect(parentProbabilities(ARCHIVE.slice(0, 1), "score_child_prop")).toEqual([1]);
  });
});

describe("dgm: self-improvement target", () => {
  const results = { resolved: ["r1"], unresolved: ["u1", "u2"], emptyPatch: ["e1"], contextExceeded: true };
  it("empty patches first (≥10% empty, draw < 0.25), then stochasticity, then context length, else an unresolved instance", () => {
    expect(chooseTarget(results, () => 0.1)).toBe("solve_empty_patches");
    const d1 = [0.5, 0.1];
    expect(chooseTarget(results, () => d1.shift() as number)).toBe("solve_stochasticity");
    const d2 = [0.5, 0.5, 0.2];
    expect(chooseTarget(results, () => d2.shift() as number)).toBe("solve_contextlength");
    const d3 = [0.5, 0.5, 0.5, 0.6];
    expect(chooseTarget(results, () => d3.shift() as number)).toEqual({ instance: "u2" });
  });
  it("a draw is consumed only where its condition is reached (no empty patches: the first draw decides stochasticity)", () => {
    const d = [0.1];
    expect(chooseTarget({ resolved: ["r"], unresolved: ["u"], emptyPatch: [] }, () => d.shift() as number)).toBe(
      "solve_stochasticity",
    );
  });
  it("nothing unresolved: no target (upstream would crash on random.choice([]))", () => {
    expect(chooseTarget({ resolved: ["r"], unresolved: [], emptyPatch: [] }, () => 0.9)).toBeUndefined();
  });
});

describe("dgm: archive update and staged evaluation", () => {
  it("a child compiles with one non-empty patch and a fully evaluated first stage", () => {
    expect(compiled({ resolved: 1, unresolved: 2, submitted: 10 }, 10)).toBe(true);
    expect(compiled({ resolved: 0, unresolved: 0, submitted: 10 }, 10)).toBe(false);
    expect(compiled({ resolved: 3, unresolved: 2, submitted: 9 }, 10)).toBe(false);
    expect(compiled(undefined, 10)).toBe(false);
  });
  it("keep_all keeps everything; keep_better keeps score ≥ initial − 0.1 (boundary included)", () => {
    expect(keepChild(0.0, 0.5, "keep_all")).toBe(true);
    expect(keepChild(0.4, 0.5, "keep_better")).toBe(true);
    expect(keepChild(0.39, 0.5, "keep_better")).toBe(false);
    expect(keepChild(0.45, 0.5, "keep_better", 0.02)).toBe(false);
  });
  it("full-evaluation threshold: second highest of the initial and the fully evaluated, at least 0.4", () => {
    const archive = [
      { score: 0.5, submitted: 200 },
      { score: 0.62, submitted: 190 },
      { score: 0.9, submitted: 60 }, // not evaluated on ≥ 90% of the full set: ignored
    ];
    expect(fullEvalThreshold(0.3, archive, 200)).toBe(0.5);
    expect(fullEvalThreshold(0.3, [{ score: 0.3, submitted: 200 }], 200)).toBe(0.4);
    expect(fullEvalThreshold(0.55, [], 200)).toBe(0.55);
  });
  it("stages: medium when resolved ≥ 0.4·|small| (4 of 10 passes, 3 does not); full when the score beats the threshold", () => {
    expect(nextStage("small", { resolved: 4, smallSize: 10, score: 0.4, threshold: 0.5 })).toBe("medium");
    expect(nextStage("small", { resolved: 3, smallSize: 10, score: 0.3, threshold: 0.5 })).toBe("done");
    expect(nextStage("medium", { resolved: 20, smallSize: 10, score: 0.51, threshold: 0.5 })).toBe("full");
    expect(nextStage("medium", { resolved: 20, smallSize: 10, score: 0.5, threshold: 0.5 })).toBe("done");
    expect(nextStage("full", { resolved: 20, smallSize: 10, score: 0.9, threshold: 0.5 })).toBe("done");
  });
});
