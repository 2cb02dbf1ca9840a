import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HoneError } from "../../src/errors.ts";
import { optimize } from "../../src/loop/optimize.ts";
import { replayRun } from "../../src/loop/replay.ts";
import { offlineOptimizeSettings, tempDir } from "../helpers/fixtures.ts";

// A finished two-round run resumed with --rounds 1 ended on round 1's incumbent: best/, best_program and the run's
// summary moved back below round 2's promotion, which its records (and the summary table it printed) still showed.

const meta = (run: string) => JSON.parse(readFileSync(join(run, "best", "meta.json"), "utf8")) as { score: number };

describe("hone optimize --resume with fewer rounds than the run has closed", () => {
  it("is refused as a usage error, and the run's best stays where its rounds left it", { timeout: 120_000 }, async () => {
    const run = join(tempDir(), "run");
    const first = await optimize(offlineOptimizeSettings({ rounds: 2, proposals: 2, maxEvals: 3 }), { outDir: run });
    expect(first.rounds.map((r) => r.round)).toEqual([0, 1, 2]);
    const before = { meta: meta(run), program: readFileSync(join(run, "best_program.py"), "utf8") };
    expect(before.meta.score).toBe(first.bestScore);

    const refused = await optimize({}, { outDir: run, resume: true, overrides: { rounds: 1 } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HoneError);
    expect((refused as HoneError).exit).toBe("usage");
    expect((refused as Error).message).toMatch(/--rounds 1: .* has already closed round 2, .*--rounds 2 or more/);
    expect(meta(run)).toEqual(before.meta);
    expect(readFileSync(join(run, "best_program.py"), "utf8")).toBe(before.program);

    // As many rounds as it has closed: nothing to do, the same result.
    const again = await optimize({}, { outDir: run, resume: true, overrides: { rounds: 2 } });
    expect(again.bestScore).toBe(first.bestScore);
  });

  it("a run extended by --resume --rounds is resumed again and replayed to the rounds it closed", {
    timeout: 180_000,
  }, async () => {
    const run = join(tempDir(), "run");
    await optimize(offlineOptimizeSettings({ rounds: 1, proposals: 2, maxEvals: 3 }), { outDir: run });
    const extended = await optimize({}, { outDir: run, resume: true, overrides: { rounds: 2 } });
    expect(extended.rounds.map((r) => r.round)).toEqual([0, 1, 2]);
    // Its settings still say one round: resumed without --rounds, or with the rounds it closed, it is as it was.
    const plain = await optimize({}, { outDir: run, resume: true });
    expect(plain.bestScore).toBe(extended.bestScore);
    expect(plain.rounds.map((r) => r.round)).toEqual([0, 1, 2]);
    expect((await optimize({}, { outDir: run, resume: true, overrides: { rounds: 2 } })).bestScore).toBe(extended.bestScore);
    const replay = await replayRun(run);
    expect(replay.differences).toEqual([]);
  });

  it("a run given more rounds on resume and stopped again goes on to them when resumed plainly", {
    timeout: 240_000,
  }, async () => {
    const run = join(tempDir(), "run");
    await optimize(offlineOptimizeSettings({ rounds: 1, proposals: 2, maxEvals: 3 }), { outDir: run });
    // Given three rounds, stopped after the second (as a kill between rounds leaves it).
    await optimize({}, { outDir: run, resume: true, overrides: { rounds: 3 }, nextRound: (round) => round <= 2 });
    const plain = await optimize({}, { outDir: run, resume: true });
    expect(plain.rounds.map((r) => r.round)).toEqual([0, 1, 2, 3]);
    expect((await replayRun(run)).differences).toEqual([]);
  });
});
