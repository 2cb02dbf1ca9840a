import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { experienceDigest } from "../../src/method/digest.ts";
import { finishRound, insertCandidate, setRewards, startRound } from "../../src/store/candidates.ts";
import { type Db, openDb } from "../../src/store/db.ts";
import { tempDir } from "../helpers/fixtures.ts";

// The experience digest the proposer reads each round (context learning), against a real hone.db: what it keeps when
// the best spec is large (a whole system prompt is up to 8000 characters, the default budget is 2000 tokens = 8000
// characters) and when the run is long.

const OPTS = { tokenBudget: 2000, metric: "combined_score", direction: "maximize" };

function candidate(db: Db, round: number, slot: number, spec: object | null, changed: string[], status = "valid") {
  const id = `r${String(round).padStart(2, "0")}-k${slot}`;
  insertCandidate(db, "run", {
    id,
    round,
    slot,
    parentCommit: "p",
    commit: status === "invalid" ? null : `c${id}`,
    ref: null,
    contentHash: null,
    spec: spec ? JSON.stringify(spec) : null,
    changed,
    status,
    gateError: status === "invalid" ? "system_prompt: must not be empty" : null,
    repaired: false,
  });
  return id;
}

function runDb(): Db {
  const db = openDb(join(tempDir(), "hone.db"));
  startRound(db, "run", 0, "running", "seed", 0.9);
  finishRound(db, "run", 0, 0.95, true);
  return db;
}

describe("the experience digest within its token budget", () => {
  it("a best spec as long as a whole system prompt leaves the best, worst, refused and tried changes in the digest", () => {
    const db = runDb();
    startRound(db, "run", 1, "running", "seed", 0.95);
    const big = candidate(db, 1, 0, { system_prompt: "Plan each edit carefully. ".repeat(300) }, ["system_prompt"]);
    const small = candidate(db, 1, 1, { sampling: { temperature: 0.3 } }, ["sampling.temperature=0.3"]);
    candidate(db, 1, 2, null, [], "invalid");
    setRewards(db, [
      { id: big, reward: 0.4, advantage: 0.5, score: 1.2 },
      { id: small, reward: 0.1, advantage: -0.5, score: 1.0 },
    ]);
    finishRound(db, "run", 1, 1.2, true);

    const digest = experienceDigest(db, "run", OPTS);
    expect(digest.length).toBeLessThanOrEqual(OPTS.tokenBudget * 4);
    expect(digest).toContain("Best specs so far:\n- r1#0 reward 0.4, combined_score 1.2: system_prompt");
    expect(digest).toContain("Worst specs so far:\n- r1#1 reward 0.1");
    expect(digest).toContain("r1#2 invalid: system_prompt: must not be empty");
    expect(digest).toContain("All changes tried, in order:");
    expect(digest).toMatch(/best_spec_json: \(r1#0's JSON, \d+ characters, is left out/);
  });

  it("a small best spec is still given whole, as JSON to build on", () => {
    const db = runDb();
    startRound(db, "run", 1, "running", "seed", 0.95);
    const id = candidate(db, 1, 0, { sampling: { temperature: 0.3 } }, ["sampling.temperature=0.3"]);
    setRewards(db, [{ id, reward: 0.2, advantage: 0, score: 1.1 }]);
    finishRound(db, "run", 1, 1.1, true);
    expect(experienceDigest(db, "run", OPTS)).toContain('best_spec_json: {"sampling":{"temperature":0.3}}');
  });

  it("a long run keeps its latest changes and says how many earlier ones were cut", () => {
    const db = runDb();
    const rounds = 60;
    for (let round = 1; round <= rounds; round++) {
      startRound(db, "run", round, "running", "seed", 0.95);
      const rows = [0, 1, 2, 3].map((slot) => {
        const fields = ["agent.max_iterations=40", `sampling.temperature=0.${slot}${round}`, "new_skill.some-long-skill-name"];
        return { id: candidate(db, round, slot, { agent: { max_iterations: 40 } }, fields), slot };
      });
      setRewards(
        db,
        rows.map((r) => ({ id: r.id, reward: r.slot / 10 + round / 1000, advantage: 0, score: 1 + round / 100 })),
      );
      finishRound(db, "run", round, 1 + round / 100, false);
    }
    const digest = experienceDigest(db, "run", OPTS);
    expect(digest.length).toBeLessThanOrEqual(OPTS.tokenBudget * 4);
    expect(digest).toContain(`- r${rounds}#3 `); // the latest round's changes are what the next proposal needs
    expect(digest).toMatch(/\(\d+ earlier changes cut to the digest's token budget\)/);
    expect(digest).not.toContain("- r2#1 "); // an early change, neither among the best nor the worst
  });
});
