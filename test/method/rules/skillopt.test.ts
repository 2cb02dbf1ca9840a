import { describe, expect, it } from "vitest";
import {
  applyEdits,
  clipEdits,
  editBudget,
  formatStepBuffer,
  gate,
  gateScore,
  pushStep,
  type SkillEdit,
  type StepEntry,
  stepEntry,
} from "../../../src/method/rules/skillopt.ts";

// Expected values produced by running SkillOpt's own scheduler.py, skill.py, gate.py and trainer._format_step_buffer
// (commit bdfdc30) on the same inputs in a scratch script outside the repository.
const steps = (schedule: "constant" | "linear" | "cosine" | "autonomous", total: number, max = 4, min = 2, n = total + 1) =>
  Array.from({ length: n }, (_, i) => editBudget(i + 1, total, schedule, max, min));

describe("skillopt: the edit budget (bounded edits per step)", () => {
  it("cosine 4 → 2 (SkillOpt's defaults) over 8 and 12 steps, clamped after the last", () => {
    expect(steps("cosine", 8)).toEqual([4, 4, 3, 3, 3, 2, 2, 2, 2]);
    expect(steps("cosine", 12)).toEqual([4, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 2]);
    expect(steps("cosine", 3)).toEqual([4, 2, 2, 2]);
    expect(steps("cosine", 6, 8, 2, 6)).toEqual([8, 6, 5, 4, 2, 2]);
  });
  it("linear, constant, autonomous; a one-step run keeps the maximum", () => {
    expect(steps("linear", 8)).toEqual([4, 4, 3, 3, 3, 2, 2, 2, 2]);
    expect(steps("linear", 3)).toEqual([3, 3, 2, 2]);
    expect(steps("constant", 3)).toEqual([4, 4, 4, 4]);
    expect(steps("autonomous", 1)).toEqual([999, 999]);
    expect(steps("cosine", 1)).toEqual([4, 4]);
  });
  it("over budget: the ranker's valid distinct indices in order, else the first `budget` (the fallback truncation)", () => {
    const edits = ["e0", "e1", "e2", "e3", "e4"];
    expect(clipEdits(edits, 2, [3, 3, 9, -1, "x", 1, 0])).toEqual(["e3", "e1"]);
    expect(clipEdits(edits, 2, ["bad"])).toEqual(["e0", "e1"]);
    expect(clipEdits(edits, 2)).toEqual(["e0", "e1"]);
    expect(clipEdits(edits.slice(0, 2), 4, [1])).toEqual(["e0", "e1"]);
  });
});

describe("skillopt: applying edits to the one skill document", () => {
  it("every op, protected regions kept, statuses as SkillOpt reports them", () => {
    const doc = "# Skill\nLine one.\nLine two.\n\n<!-- SLOW_UPDATE_START -->\nslow part\n<!-- SLOW_UPDATE_END -->\n";
    const edits: SkillEdit[] = [
      { op: "append", content: "Appended." },
      { op: "insert_after", target: "Line one", content: "Inserted." },
      { op: "replace", target: "Line two.", content: "Line 2." },
      { op: "delete", target: "slow part" },
      { op: "replace", target: "missing", content: "x" },
      { op: "insert_after", target: "missing", content: "Fallback." },
      { op: "delete", target: "" },
      { op: "frobnicate", content: "x" },
      { op: "append", content: "a <!-- APPENDIX_START --> b" },
    ];
    const r = applyEdits(doc, edits);
    expect(r.skill).toBe(
      "# Skill\nLine one.\n\nInserted.\nLine 2.\n\nAppended.\n\nFallback.\n\na  b\n\n<!-- SLOW_UPDATE_START -->\nslow part\n<!-- SLOW_UPDATE_END -->\n",
    );
    expect(r.statuses).toEqual([
      "applied_append_before_protected_region",
      "applied_insert_after",
      "applied_replace",
      "skipped_protected_region",
      "skipped_replace_target_not_found",
      "applied_insert_after_fallback_before_protected_region",
      "skipped_delete_missing_target",
      "skipped_unknown_op",
      "applied_append_before_protected_region",
    ]);
  });
  it("without protected regions: append strips trailing space, insert_after goes after the target's line", () => {
    const r = applyEdits("plain", [
      { op: "append", content: "  tail  " },
      { op: "insert_after", target: "plain", content: "after" },
    ]);
    expect(r.skill).toBe("plain\n\nafter\n\ntail\n");
    expect(r.statuses).toEqual(["applied_append", "applied_insert_after"]);
  });
});

describe("skillopt: the gate accepts only a strict validation improvement", () => {
  it("better than current: accept (or accept_new_best above the best); equal or worse: reject", () => {
    expect([gate(0.6, 0.5, 0.7), gate(0.8, 0.5, 0.7), gate(0.5, 0.5, 0.7), gate(0.4, 0.5, 0.7)]).toEqual([
      "accept",
      "accept_new_best",
      "reject",
      "reject",
    ]);
    expect(gate(0.1, 0.5, 0.7, false)).toBe("force_accept");
  });
  it("hard, soft or mixed score: mixed(0.5, 0.9, w = 0.25) = 0.6", () => {
    expect(gateScore(0.5, 0.9)).toBe(0.5);
    expect(gateScore(0.5, 0.9, "soft")).toBe(0.9);
    expect(gateScore(0.5, 0.9, "mixed", 0.25)).toBeCloseTo(0.6, 15);
  });
});

describe("skillopt: the rejected-edit buffer", () => {
  const accepted: StepEntry = stepEntry(
    {
      step: 1,
      action: "accept",
      nTotal: 8,
      nFail: 3,
      failurePatterns: [{ pattern: "wrong units", count: 2, taskIds: ["t1", "t4"] }],
    },
    [{ op: "append", content: "kept" }],
    0.5,
    0.625,
  );
  const rejected: StepEntry = stepEntry(
    { step: 2, action: "reject", nTotal: 8, nFail: 5, failurePatterns: [] },
    [
      { op: "replace", content: "Use SI units.", target: "Use units." },
      { op: "append", content: "Double-check." },
    ],
    0.625,
    0.5,
  );
  it("holds the rejected edits and the score drop only for rejected steps", () => {
    expect(accepted.rejected).toBeUndefined();
    expect(rejected.rejected).toEqual({
      scoreBefore: 0.625,
      scoreAfter: 0.5,
      edits: [
        { op: "replace", content: "Use SI units.", target: "Use units." },
        { op: "append", content: "Double-check.", target: "" },
      ],
    });
  });
  it("is shown to the optimizer exactly as SkillOpt formats it", () => {
    expect(formatStepBuffer([accepted, rejected])).toBe(
      'Below is a summary of previous steps in this epoch. Use it to avoid repeating ineffective edits and to prioritise failure patterns that remain unsolved.\n\n### Step 1 — ACCEPT (3/8 failed)\n  - "wrong units" (×2, tasks: t1, t4)\n### Step 2 — REJECT (5/8 failed)\n  Rejected edits (score 0.625 → 0.5):\n    1. [replace] target="Use units." → "Use SI units."\n    2. [append] "Double-check."',
    );
    expect(formatStepBuffer([])).toBe("");
  });
  it("grows through an epoch (a new epoch starts from []); an optional cap keeps the newest entries", () => {
    let buf: StepEntry[] = [];
    for (let s = 1; s <= 5; s++) buf = pushStep(buf, { ...accepted, step: s });
    expect(buf.map((e) => e.step)).toEqual([1, 2, 3, 4, 5]);
    expect(pushStep(buf, { ...accepted, step: 6 }, 3).map((e) => e.step)).toEqual([4, 5, 6]);
  });
});
