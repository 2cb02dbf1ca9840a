import { beforeEach, describe, expect, it } from "vitest";
import { ratchet } from "../../src/loop/optimize-ratchet.ts";
import { insertCandidate } from "../../src/store/candidates.ts";
import { context, db, fresh, incCommit, incumbent, k0, ok, rollout, timedOut } from "../helpers/ratchet-round.ts";

// A measured deterministic evaluator: the round's winner is re-evaluated N times before it is promoted. When all N
// timed out, nothing was promoted that round, yet a runner-up that also cleared the incumbent was recorded as "k0
// scored higher", as though k0 had taken its place. Its reason now says what happened: nothing was promoted. And a
// winner one of whose re-evaluations timed out was said to be "reproduced by 3 re-evaluations" where 2 reproduced it.

beforeEach(fresh);

/** A second candidate k1 of round 1 whose rollout's best program is `best`, scoring `own`. */
function runnerUp(best: string, own: number) {
  insertCandidate(db, "run", {
    id: "k1",
    round: 1,
    slot: 2,
    parentCommit: incCommit,
    commit: "k1-commit",
    ref: null,
    contentHash: "hash-k1",
    spec: null,
    changed: [],
    status: "valid",
    gateError: null,
    repaired: false,
  });
  rollout(best, own, "k1");
}

const k1 = () => ({ candidate: "k1", commit: "k1-commit", dir: "unused" });

describe("the runner-up's reason in a round whose winner could not be confirmed", () => {
  it("all N confirmations of the winner timed out: the runner-up's reason says nothing was promoted", async () => {
    const { ctx } = context(async (p) => (p === "BEST" ? timedOut() : ok(p === "GOOD" ? 0.75 : 0.7)));
    rollout("BEST", 0.8);
    runnerUp("GOOD", 0.75);
    const r = await ratchet(ctx, 1, incumbent(0.7), [k0(), k1()]);
    expect(r.next.commit).toBe(incCommit);
    expect(r.decisions.map((d) => [d.candidate_id, d.decision])).toEqual([
      ["k0", "reject"],
      ["k1", "reject"],
    ]);
    const reason = r.decisions.find((d) => d.candidate_id === "k1")?.reason ?? "";
    expect(reason).toMatch(/but k0 scored higher and only the highest is confirmed/);
    expect(reason).toMatch(/its re-evaluations all timed out, so nothing was promoted this round$/);
  });

  it("a confirmed winner: the runner-up's reason is as before", async () => {
    const { ctx } = context(async (p) => ok(p === "BEST" ? 0.8 : p === "GOOD" ? 0.75 : 0.7));
    rollout("BEST", 0.8);
    runnerUp("GOOD", 0.75);
    const r = await ratchet(ctx, 1, incumbent(0.7), [k0(), k1()]);
    expect(r.decisions.map((d) => [d.candidate_id, d.decision])).toEqual([
      ["k0", "promote"],
      ["k1", "reject"],
    ]);
    expect(r.decisions.find((d) => d.candidate_id === "k1")?.reason).toMatch(/, but k0 scored higher$/);
  });

  it("a winner confirmed by 2 of 3 re-evaluations (one timed out) says 2 reproduced it, not 3", async () => {
    let n = 0;
    const { ctx } = context(async (p) => (p === "BEST" && n++ === 0 ? timedOut() : ok(p === "BEST" ? 0.8 : 0.7)));
    rollout("BEST", 0.8);
    const r = await ratchet(ctx, 1, incumbent(0.7), [k0()]);
    expect(r.decisions[0]).toMatchObject({ decision: "promote" });
    expect(r.decisions[0]?.reason).toMatch(/, reproduced by 2 re-evaluations \(1 more timed out\)$/);
  });
});
