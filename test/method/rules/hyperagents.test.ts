import { describe, expect, it } from "vitest";
import {
  type HyperNode,
  hyperCandidates,
  hyperParent,
  hyperProbabilities,
  validParent,
} from "../../../src/method/rules/hyperagents.ts";
import { rng } from "../../../src/rng.ts";

// n0 (0.2) has three children (n1, n2 and an invalid node), n1 (0.5) has n3, n2 (0.6) none, n3 (0.9) nine invalid ones.
const node = (id: string, parent: string | null, score?: number, validParent = true): HyperNode => ({
  id,
  parent,
  score,
  validParent,
});
const ARCHIVE: HyperNode[] = [
  node("n0", null, 0.2),
  node("n1", "n0", 0.5),
  node("n2", "n0", 0.6),
  node("i1", "n0", undefined, false),
  node("n3", "n1", 0.9),
  ...Array.from({ length: 9 }, (_, k) => node(`x${k}`, "n3", 0.1, false)),
];

describe("hyperagents: parent selection", () => {
  it("candidates are valid parents with scores; children count every node naming them", () => {
    expect(hyperCandidates(ARCHIVE)).toEqual([
      { id: "n0", score: 0.2, children: 3 },
      { id: "n1", score: 0.5, children: 1 },
      { id: "n2", score: 0.6, children: 0 },
      { id: "n3", score: 0.9, children: 9 },
    ]);
  });
  it("score_child_prop: sigmoid(10(s − mean of top 3)) · exp(−(c/8)³) (values from the formula in Python, mean 0.6667)", () => {
    const expected = [0.012170322362448261, 0.21835742411595466, 0.46718452465918503, 0.302287728862412];
    hyperProbabilities(ARCHIVE, "score_child_prop").forEach((p, i) => {
      expect(p).toBeCloseTo(expected[i] as number, 14);
    });
  });
  it("score_prop drops the children factor", () => {
    const expected = [0.006565023847458096, 0.11195620585440232, 0.23906743757207177, 0.6424113327260678];
    hyperProbabilities(ARCHIVE, "score_prop").forEach((p, i) => {
      expect(p).toBeCloseTo(expected[i] as number, 14);
    });
  });
  it("best, latest, random; no scored candidate falls back to the first node; an empty archive has none", () => {
    expect(hyperParent(ARCHIVE, "best", rng(1))).toBe("n3");
    expect(hyperParent(ARCHIVE, "latest", rng(1))).toBe("n3");
    expect(["n0", "n1", "n2", "n3"]).toContain(hyperParent(ARCHIVE, "random", rng(1)));
    expect(hyperParent([node("a", null, undefined, false)], "score_child_prop", rng(1))).toBe("a");
    expect(hyperParent([], "best", rng(1))).toBeUndefined();
    expect(hyperParent(ARCHIVE, "score_child_prop", () => 0.5)).toBe("n2"); // cumulative 0.012, 0.231, 0.698
  });
  it("the validity gate: evaluated, and every domain scored or a patch exists", () => {
    expect(validParent({ evaluated: true, allDomainsScored: false, patchExists: true })).toBe(true);
    expect(validParent({ evaluated: true, allDomainsScored: false, patchExists: false })).toBe(false);
    expect(validParent({ evaluated: false, allDomainsScored: true, patchExists: true })).toBe(false);
  });
});
