import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { changedFields, type HarnessSpec } from "../../src/harness/spec.ts";
import { experienceDigest } from "../../src/method/digest.ts";
import { finishRound, insertCandidate, setRewards, startRound } from "../../src/store/candidates.ts";
import { openDb } from "../../src/store/db.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A spec may set budget_reminder's message: a text of up to 2000 characters, which changedFields labels in full
// (`budget_reminder.message=<the text>`). The digest printed every label whole, so four such specs filled the
// default budget (2000 tokens = 8000 characters) with their "best specs" lines and the worst specs, the refused
// proposals and why, and the changes tried were cut: what context learning promises the proposer to see.

const OPTS = { tokenBudget: 2000, metric: "combined_score", direction: "maximize" };
const MESSAGE = `Budget: {left} call(s) left.\n${"Spend each one on the most promising edit. ".repeat(45)}`.slice(0, 2000);

describe("the digest's lines with a long middleware message among the changes", () => {
  it("keep the best, the worst, the refusals and the changes tried within the budget", () => {
    const db = openDb(join(tempDir(), "hone.db"));
    startRound(db, "run", 0, "running", "seed", 0.9);
    finishRound(db, "run", 0, 0.95, true);
    startRound(db, "run", 1, "running", "seed", 0.95);
    const spec: HarnessSpec = { middleware_params: { budget_reminder: { message: MESSAGE } } };
    const rewards = [];
    for (let slot = 0; slot < 5; slot++) {
      const id = `r01-k${slot}`;
      const refused = slot === 4;
      insertCandidate(db, "run", {
        id,
        round: 1,
        slot,
        parentCommit: "p",
        commit: refused ? null : `c${id}`,
        ref: null,
        contentHash: null,
        spec: refused ? null : JSON.stringify(spec),
        changed: refused ? [] : changedFields(spec),
        status: refused ? "invalid" : "valid",
        gateError: refused ? "new_tools.0.code: [no-eval] eval is refused at 2:3" : null,
        repaired: false,
      });
      if (!refused) rewards.push({ id, reward: slot / 10, advantage: 0, score: 1 + slot / 10 });
    }
    setRewards(db, rewards);
    finishRound(db, "run", 1, 1.3, true);

    const digest = experienceDigest(db, "run", OPTS);
    expect(digest.length).toBeLessThanOrEqual(OPTS.tokenBudget * 4);
    expect(digest).not.toContain("(digest cut to its token budget)");
    expect(digest).toContain("Worst specs so far:\n- r1#0 reward 0, combined_score 1: budget_reminder.message=Budget:");
    expect(digest).toContain("r1#4 invalid: new_tools.0.code: [no-eval] eval is refused at 2:3");
    expect(digest).toContain("All changes tried, in order:");
    // A label is one line of the digest: the message's line break does not start a line of its own.
    for (const l of digest.split("\n").filter((x) => /^- r1#\d (reward|combined)/.test(x)))
      expect(l).toMatch(/^- r1#\d (reward [-\d.]+, )?combined_score [-\d.]+: /);
    expect(digest).not.toMatch(/^Spend each one/m);
    // The whole spec is still there to build on.
    expect(digest).toContain(`best_spec_json: ${JSON.stringify(spec)}`);
  });
});
