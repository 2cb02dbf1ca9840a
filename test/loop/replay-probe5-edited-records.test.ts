import { cpSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { optimize } from "../../src/loop/optimize.ts";
import { replayRun } from "../../src/loop/replay.ts";
import { offlineOptimizeSettings, tempDir } from "../helpers/fixtures.ts";

// A recorded run edited by hand must never replay into other numbers reported as a match, nor go on past a damaged
// record as if a rollout had failed on its own.

let recorded: string;

beforeAll(async () => {
  recorded = join(tempDir(), "run");
  await optimize(offlineOptimizeSettings({ rounds: 1, proposals: 2, maxEvals: 3, seed: 5 }), { outDir: recorded });
}, 180_000);

/** A copy of the recorded run, changed by `edit` on its hone.db. */
function edited(edit: (db: Database.Database) => void): string {
  const dir = join(tempDir(), "edited");
  cpSync(recorded, dir, { recursive: true });
  const db = new Database(join(dir, "hone.db"));
  try {
    edit(db);
  } finally {
    db.close();
  }
  return dir;
}

/** The first model call of the seed rollout as the run recorded it: its prompt and completion tokens. */
function firstSeedCall(db: Database.Database): { prompt_tokens: number; completion_tokens: number } {
  return db
    .prepare("SELECT prompt_tokens, completion_tokens FROM model_calls WHERE rollout_id = 'r00-seed' ORDER BY id LIMIT 1")
    .get() as { prompt_tokens: number; completion_tokens: number };
}

/** Rewrites every recorded response that `pick` chooses with `change`. */
function rewriteResponses(
  db: Database.Database,
  pick: (r: { usage: { prompt_tokens: number; completion_tokens: number } }) => boolean,
  change: (text: string) => string,
): number {
  const rows = db.prepare("SELECT key, response FROM responses").all() as { key: string; response: string }[];
  let n = 0;
  for (const row of rows)
    if (pick(JSON.parse(row.response))) {
      db.prepare("UPDATE responses SET response = ? WHERE key = ?").run(change(row.response), row.key);
      n++;
    }
  return n;
}

describe("a replay of a recording edited by hand", () => {
  it("replays the run unedited as an exact match, model calls included", { timeout: 120_000 }, async () => {
    const r = await replayRun(recorded, join(tempDir(), "replay"));
    expect(r.differences).toEqual([]);
    expect(r.counts.model_calls).toBeGreaterThan(0);
  });

  // Before: a response whose token counts were changed replayed "exactly" while the replay's receipt showed other
  // token totals than the recorded run's (model calls were not compared).
  it("reports a response whose token counts were changed, naming the rollout", { timeout: 120_000 }, async () => {
    const dir = edited((db) => {
      const first = firstSeedCall(db);
      const n = rewriteResponses(
        db,
        (r) => r.usage.prompt_tokens === first.prompt_tokens && r.usage.completion_tokens === first.completion_tokens,
        (text) => {
          const r = JSON.parse(text);
          r.usage.prompt_tokens += 1000;
          r.usage.total_tokens += 1000;
          return JSON.stringify(r);
        },
      );
      expect(n).toBeGreaterThan(0);
    });
    const r = await replayRun(dir, join(tempDir(), "replay"));
    expect(r.differences.some((d) => /^model_calls: executor calls of r00-seed in round 0: .* ≠ /.test(d))).toBe(true);
  });

  // Before: a damaged response in a rollout ended that rollout as a model error and the replay went on into other
  // numbers, failing later on an unrelated "never recorded" request (or listing differences).
  it("stops on a damaged response in a rollout, naming the record and the file", { timeout: 120_000 }, async () => {
    const dir = edited((db) => {
      const first = firstSeedCall(db);
      rewriteResponses(
        db,
        (r) => r.usage.prompt_tokens === first.prompt_tokens && r.usage.completion_tokens === first.completion_tokens,
        (text) => text.slice(0, 40),
      );
    });
    await expect(replayRun(dir, join(tempDir(), "replay"))).rejects.toThrow(
      new RegExp(`rollout r00-seed: replay: the recorded response [0-9a-f]{16}… in ${dir}/hone.db is damaged`),
    );
  });

  // Before: a damaged evaluation failed its rollout as a measurement and the replay went on, to stop later on a
  // proposer request that was "never recorded".
  it("stops on a damaged evaluation in a rollout, naming the record and the file", { timeout: 120_000 }, async () => {
    const dir = edited((db) => {
      const seed = db.prepare("SELECT mean FROM noise").get() as { mean: number };
      const scores = (
        db.prepare("SELECT score FROM evaluations WHERE rollout_id = 'r00-seed' AND valid = 1 AND score != ?").all(seed.mean) as {
          score: number;
        }[]
      ).map((r) => r.score);
      expect(scores.length).toBeGreaterThan(0);
      const rows = db.prepare("SELECT key, result FROM evaluation_records").all() as { key: string; result: string }[];
      for (const row of rows)
        if (scores.includes(JSON.parse(row.result).score))
          db.prepare("UPDATE evaluation_records SET result = ? WHERE key = ?").run(row.result.slice(0, 30), row.key);
    });
    await expect(replayRun(dir, join(tempDir(), "replay"))).rejects.toThrow(
      new RegExp(`rollout r00-seed: replay: the recorded evaluation [0-9a-f]{16}… in ${dir}/hone.db is damaged`),
    );
  });
});

describe("a replay of a run whose summary was edited by hand", () => {
  // Before: the run's summary (the result `hone receipt` prints) was not compared: a best score edited to 9.99
  // replayed as an exact match.
  it("reports the summary field that differs", { timeout: 120_000 }, async () => {
    const dir = edited((db) => {
      const summary = JSON.parse((db.prepare("SELECT summary FROM runs").get() as { summary: string }).summary);
      db.prepare("UPDATE runs SET summary = ?").run(JSON.stringify({ ...summary, best_score: 9.99 }));
    });
    const r = await replayRun(dir, join(tempDir(), "replay"));
    expect(r.differences).toHaveLength(1);
    expect(r.differences[0]).toMatch(/^summary\.best_score: 9\.99 ≠ \d/);
  });
});
