// HarnessTTT's round rules as the loop applies them to a round's slots (optimize-rewards.ts, optimize-proposals.ts,
// method/proposer-roles.ts), against values worked out by hand from the released formulas (method/reward.ts's header):
// reward 3·tanh(r/3) above the incumbent, max(−1, r) below; A = 0.7·LOO + 0.3·(softmax(r/τ) − 1/K), τ = range/4.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SearchContext } from "../../src/loop/optimize-context.ts";
import { keepByRatchet } from "../../src/loop/optimize-method.ts";
import { failRound, gateMode, roundGate } from "../../src/loop/optimize-proposals.ts";
import { slotRewards } from "../../src/loop/optimize-rewards.ts";
import { harnessttt } from "../../src/method/methods/harnessttt.ts";
import { slotNote, slotRole } from "../../src/method/proposer-roles.ts";
import { type CandidateRow, insertCandidate, roundCandidates, roundState, startRound } from "../../src/store/candidates.ts";
import { createRunDb, openDb } from "../../src/store/db.ts";
import { insertDecisions, roundDecisions } from "../../src/store/decisions.ts";
import { methodDecisions } from "../../src/store/method-state.ts";
import { tempDir } from "../helpers/fixtures.ts";

const HALF_GAP = 3 * Math.tanh(0.5 / 3); // halfway to the reference: 0.4954212387738881

describe("a round's credit, slot by slot", () => {
  it("an unmeasurable slot (its paired control failed) is left out of the group; an invalid one is charged −1", () => {
    // b = 1, ref = 2. Slot 0 halfway to the reference; slot 1 refused by the gate; slot 2 unmeasurable.
    const c = slotRewards(
      [
        { status: "valid", score: 1.5, baseline: 1 },
        { status: "invalid", score: undefined, baseline: 1 },
        { status: "valid", score: null, baseline: undefined },
      ],
      2,
      "maximize",
    );
    expect(c.rewards[0]).toBeCloseTo(HALF_GAP, 12);
    expect(c.rewards[1]).toBe(-1);
    expect(c.rewards[2]).toBeNull();
    // A group of two: one valid reward, so its range is 0 and it stands for itself (the tie rule); τ = 1e-6 makes
    // the softmax one-hot: A0 = 0.7·(0.49542 + 1) + 0.3·(1 − 1/2) = 1.19679..., A1 = −A0.
    expect(c.advantages[0]).toBeCloseTo(0.7 * (HALF_GAP + 1) + 0.3 * 0.5, 12);
    expect(c.advantages[0]).toBeCloseTo(1.1967948671417215, 12);
    expect(c.advantages[1]).toBeCloseTo(-1.1967948671417215, 12);
    expect(c.advantages[2]).toBeNull();
  });

  it("minimise: a repaired slot is charged −1 whatever it scored; τ is a quarter of the group's range", () => {
    // Erdős-style: b = 0.40, ref = 0.38. Slot 0 at 0.39 (half the gap), slot 1 repaired at 0.38, slot 2 worse at 0.41.
    const c = slotRewards(
      [
        { status: "valid", score: 0.39, baseline: 0.4 },
        { status: "repaired", score: 0.38, baseline: 0.4 },
        { status: "valid", score: 0.41, baseline: 0.4 },
      ],
      0.38,
      "minimize",
    );
    expect(c.rewards[0]).toBeCloseTo(HALF_GAP, 9);
    expect(c.rewards[1]).toBe(-1);
    expect(c.rewards[2]).toBeCloseTo(-0.5, 9);
    // r = [0.49542, −1, −0.5], range 1.49542, τ = 0.37386; LOO = [1.24542, −1.24771, −0.24771];
    // softmax(r/τ) = [0.90855, 0.02045, 0.07100] → A = [1.04751, −0.79335, −0.25416].
    const want = [1.047509043237946, -0.7933475522849776, -0.25416149095296847];
    c.advantages.forEach((a, i) => {
      expect(a).toBeCloseTo(want[i] as number, 8);
    });
  });

  it("zero signal: every slot valid and the same reward → every advantage 0 (no update)", () => {
    const same = { status: "valid", score: 1.5, baseline: 1 };
    const c = slotRewards([same, same, same], 2, "maximize");
    expect(c.advantages).toEqual([0, 0, 0]);
    expect(c.rewards.every((r) => Math.abs((r as number) - HALF_GAP) < 1e-12)).toBe(true);
  });

  it("winners past the reference stay ranked (soft cap), so they get different advantages", () => {
    const c = slotRewards(
      [
        { status: "valid", score: 3, baseline: 1 },
        { status: "valid", score: 4, baseline: 1 },
      ],
      2,
      "maximize",
    );
    expect(c.rewards[0]).toBeCloseTo(3 * Math.tanh(2 / 3), 12);
    expect(c.rewards[1]).toBeCloseTo(3 * Math.tanh(1), 12);
    expect(c.advantages[1] as number).toBeGreaterThan(c.advantages[0] as number);
  });
});

const row = (slot: number, status: string): CandidateRow => ({
  id: `r01-k${slot}`,
  slot,
  status,
  commit_sha: status === "invalid" ? null : `c${slot}`,
  spec: null,
  gate_error: status === "invalid" ? "refused" : null,
});

/** Round 1's proposals, recorded as the loop records them. */
function insertRound(db: Parameters<typeof insertCandidate>[0], rows: CandidateRow[]): void {
  for (const c of rows)
    insertCandidate(db, "run", {
      id: c.id,
      round: 1,
      slot: c.slot,
      parentCommit: "seedcommit",
      commit: c.commit_sha,
      ref: null,
      contentHash: null,
      spec: null,
      changed: [],
      status: c.status,
      gateError: c.gate_error,
      repaired: false,
    });
}

describe("the proposal gate over a round's slots", () => {
  it("hone methods shows the gate's default as the loop applies it, for every K", () => {
    const shown = harnessttt.derivedDefaults?.proposal_gate;
    expect(shown?.rule).toBe("min⌈6K/8⌉");
    for (let k = 1; k <= 16; k++)
      expect(shown?.forK?.(k)).toBe(`min${(gateMode({ diversity: false }, k) as { min: number }).min}`);
  });

  it("defaults to 6 of 8 scaled to K (rounded up); the parameter overrides it", () => {
    expect(gateMode({ diversity: false }, 8)).toEqual({ kind: "min", min: 6 });
    expect(gateMode({ diversity: false }, 3)).toEqual({ kind: "min", min: 3 });
    expect(gateMode({ diversity: false, proposal_gate: "min1" }, 3)).toEqual({ kind: "min", min: 1 });
    expect(gateMode({ diversity: false, proposal_gate: "off" }, 3)).toEqual({ kind: "off" });
  });

  it("counts valid and repaired proposals; fewer than the minimum fails the round", () => {
    const four = [row(0, "valid"), row(1, "repaired"), row(2, "invalid"), row(3, "valid")];
    expect(roundGate(four, 4, { diversity: false })).toEqual({ valid: 3, passed: true, minValid: 3 });
    const two = [row(0, "valid"), row(1, "invalid"), row(2, "invalid"), row(3, "valid")];
    expect(roundGate(two, 4, { diversity: false })).toMatchObject({ valid: 2, passed: false, minValid: 3 });
    expect(roundGate(two, 4, { diversity: false, proposal_gate: "min2" }).passed).toBe(true);
  });

  it("refuses a gate that asks more than K, as a usage error naming the parameter", () => {
    expect(() => gateMode({ diversity: false, proposal_gate: "min5" }, 4)).toThrow(/proposal_gate.*min<N> with 1 <= N <= 4/);
  });

  it("harnessttt's parameters: the gate's spelling checked, diversity off by default", () => {
    expect(harnessttt.params.parse({})).toEqual({ diversity: false });
    expect(harnessttt.params.safeParse({ proposal_gate: "most" }).success).toBe(false);
    expect(harnessttt.params.safeParse({ colour: 1 }).success).toBe(false);
  });
});

describe("per-slot diversity roles", () => {
  it("discovery: tool, skill, middleware, params, rewrite, rewrite, then free slots (SAH's order)", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((s) => slotRole(s, "discovery"))).toEqual([
      "tool",
      "skill",
      "middleware",
      "params",
      "rewrite",
      "rewrite",
      "",
      "",
    ]);
  });
  it("QA harnesses run no generated tools or middleware: skill, params, rewrite, rewrite", () => {
    expect([0, 1, 2, 3, 4].map((s) => slotRole(s, "qa"))).toEqual(["skill", "params", "rewrite", "rewrite", ""]);
  });
  it("a slot's note only with diversity on, and none for a free slot", () => {
    expect(slotNote(0, "discovery", false)).toBe("");
    expect(slotNote(0, "discovery", true)).toMatch(/new capability tool/);
    expect(slotNote(3, "discovery", true)).toMatch(/operating point/);
    expect(slotNote(7, "discovery", true)).toBe("");
  });
});

describe("a round the proposal gate fails is recorded as failed", () => {
  it("one proposal_gate decision per slot, the round `failed`, no reward or advantage, the incumbent unmoved", () => {
    const path = join(tempDir(), "hone.db");
    createRunDb(path, "optimize", {});
    const db = openDb(path);
    startRound(db, "run", 1, "proposing", "seedcommit", 1.0);
    insertRound(db, [row(0, "valid"), row(1, "invalid"), row(2, "invalid"), row(3, "invalid")]);
    const cands = roundCandidates(db, "run", 1);
    const gate = roundGate(cands, 4, { diversity: false });
    expect(gate).toMatchObject({ valid: 1, passed: false, minValid: 3 });
    const notices: unknown[] = [];
    const ctx = { db, runId: "run", emit: (e: unknown) => notices.push(e) } as unknown as SearchContext;
    // What is written with the round (the keep decisions) is written in its transaction: a failure undoes both.
    expect(() =>
      failRound(ctx, 1, cands, gate, () => {
        throw new Error("killed while writing the keep decisions");
      }),
    ).toThrow(/killed/);
    expect(roundState(db, "run", 1)?.status).toBe("proposing");
    expect(roundDecisions(db, "run", 1)).toEqual([]);
    let wrote = false;
    failRound(ctx, 1, cands, gate, () => {
      wrote = true;
    });
    expect(wrote).toBe(true);
    expect(roundState(db, "run", 1)?.status).toBe("failed");
    const decisions = roundDecisions(db, "run", 1);
    expect(decisions.map((d) => [d.candidate_id, d.decision, d.rule])).toEqual(
      cands.map((c) => [c.id, "unmeasurable", "proposal_gate"]),
    );
    expect(decisions[1]?.reason).toMatch(/only 1\/4 valid proposals \(minimum 3 required\).*this proposal was refused: refused/);
    const credit = db.prepare("SELECT reward, advantage FROM candidates WHERE round = 1").all() as {
      reward: null;
      advantage: null;
    }[];
    expect(credit.every((c) => c.reward === null && c.advantage === null)).toBe(true);
    expect(db.prepare("SELECT moved FROM rounds WHERE round = 1").get()).toEqual({ moved: 0 });
    expect(JSON.stringify(notices)).toMatch(/failed the proposal gate/);
    db.close();
  });
});

describe("harnessttt's keep decisions are the ratchet's", () => {
  it("a promoted candidate kept, a rejected one not, a refused proposal not, each with its rule and reason", () => {
    const path = join(tempDir(), "hone.db");
    createRunDb(path, "optimize", {});
    const db = openDb(path);
    startRound(db, "run", 1, "proposing", "seedcommit", 1.0);
    insertRound(db, [row(0, "valid"), row(1, "valid"), row(2, "invalid")]);
    const decision = (id: string, d: "promote" | "reject", reason: string) =>
      ({ candidate_id: id, decision: d, rule: "strictly_better", reason, score: 1, detail: null }) as const;
    insertDecisions(db, "run", 1, [decision("r01-k0", "promote", "1.2 beats 1"), decision("r01-k1", "reject", "0.9 does not")]);
    keepByRatchet({ db, runId: "run" }, "harnessttt", 1);
    const kept = methodDecisions(db, "run", ["r01-k0", "r01-k1", "r01-k2"]);
    expect(Object.fromEntries(kept)).toEqual({
      "r01-k0": { kept: true, rule: "strictly_better", reason: "1.2 beats 1" },
      "r01-k1": { kept: false, rule: "strictly_better", reason: "0.9 does not" },
      "r01-k2": { kept: false, rule: "refused", reason: "refused" },
    });
    db.close();
  });
});
