import { createHash } from "node:crypto";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { clearsNoise } from "../../src/measure/compare.ts";
import { hone } from "../helpers/cli.ts";
import { edit, ROOT, tempDir } from "../helpers/fixtures.ts";

// A stochastic evaluator modelled on OpenEvolve's function_minimization: the program's random search and the
// evaluator's jitter come from unseeded generators (NOISE=unseeded) or from the program's text (NOISE=seeded).
const FIXTURE = join(ROOT, "test", "fixtures", "noisy-minimization");
const sha = (t: string) => createHash("sha256").update(t).digest("hex");

function variant(change: { noise?: "seeded" | "unseeded"; frozen?: boolean; stochastic?: boolean } = {}): string {
  const dir = join(tempDir(), "noisy-minimization");
  cpSync(FIXTURE, dir, { recursive: true });
  if (change.noise) edit(join(dir, "hone.yaml"), (t) => t.replace("NOISE: unseeded", `NOISE: ${change.noise}`));
  if (change.stochastic !== undefined) edit(join(dir, "hone.yaml"), (t) => `${t}stochastic: ${change.stochastic}\n`);
  // No float literal in the EVOLVE block: the offline executor's edits can never change the program.
  if (change.frozen)
    edit(join(dir, "initial_program.py"), (t) =>
      t
        .replace("STEP = 0.8", "STEP = 4 / 5")
        .replace("START_X = 2.5", "START_X = 5 / 2")
        .replace("START_Y = -2.0", "START_Y = -2"),
    );
  return dir;
}

const optimize = (task: string, out: string, rounds = 2) =>
  hone(
    [
      "optimize",
      ...["--task", task, "--rounds", String(rounds), "--proposals", "2", "--max-evals", "4", "--seed", "3"],
      ...["--cache", "off", "--out", out, "--json"],
    ],
    { timeoutMs: 300_000 },
  );

function read(out: string) {
  const db = new Database(join(out, "hone.db"), { readonly: true });
  const q = <T>(sql: string) => db.prepare(sql).all() as T[];
  const r = {
    rounds: q<{ round: number; moved: number; incumbent_score: number | null }>(
      "SELECT round, moved, incumbent_score FROM rounds ORDER BY round",
    ),
    decisions: q<{ round: number; candidate_id: string; decision: string; rule: string; detail: string | null }>(
      "SELECT round, candidate_id, decision, rule, detail FROM decisions ORDER BY round, candidate_id",
    ),
    noise: q<{ stochastic: number; basis: string; n: number; sd: number }>("SELECT stochastic, basis, n, sd FROM noise")[0],
    repeats: q<{ round: number; program_sha: string; purpose: string; score: number | null }>(
      "SELECT round, program_sha, purpose, score FROM noise_evaluations ORDER BY round, program_sha, idx",
    ),
    best: q<{ round: number; candidate_id: string; best_program: string }>(
      "SELECT round, candidate_id, best_program FROM rollouts WHERE kind <> 'parent'",
    ),
  };
  db.close();
  return r;
}

async function replayMatches(out: string): Promise<void> {
  const replay = await hone(["replay", out, "--out", `${out}-replay`, "--json"], { timeoutMs: 300_000 });
  expect(replay.code, replay.stderr).toBe(0);
  const rep = JSON.parse(replay.stdout);
  expect(rep.differences).toEqual([]);
  expect(rep.counts.decisions).toBeGreaterThan(0);
  expect(rep.counts.noise_evaluations).toBeGreaterThan(0);
}

describe("noise on a stochastic evaluator (CLI)", () => {
  it("never moves the incumbent when the program cannot change, however lucky an evaluation; the replay exits 0", {
    timeout: 300_000,
  }, async () => {
    const task = variant({ frozen: true });
    const out = join(tempDir(), "frozen");
    const r = await optimize(task, out);
    expect(r.code, r.stderr).toBe(0);
    const rec = read(out);
    expect(rec.noise).toMatchObject({ stochastic: 1, basis: "measured", n: 3 });
    expect(rec.rounds.every((x) => x.moved === 0)).toBe(true);
    expect(rec.decisions.length).toBe(5);
    // The noise is unseeded, so the proposer sees other scores in every run and its two proposals of a round can be
    // the same harness: the proposal gate then refuses that round (nothing measured), which moves nothing either.
    const rules = rec.decisions.map((d) => `${d.decision} by ${d.rule}`);
    for (const rule of rules) expect(["reject by same_program", "unmeasurable by proposal_gate"]).toContain(rule);
    expect(rules[0]).toBe("reject by same_program"); // the seed's own measurement
    expect(readFileSync(join(out, "best_program.py"), "utf8")).toBe(readFileSync(join(task, "initial_program.py"), "utf8"));
    const log = await hone(["log", out]);
    expect(log.stdout).toMatch(/noise {4}stochastic \(measured on 3 evaluations of the seed program, sd [\d.e-]+/);
    expect(log.stdout).toMatch(/reject by same_program: its best program is the incumbent's program, byte for byte/);
    const receipt = JSON.parse((await hone(["receipt", out, "--json"])).stdout);
    expect(receipt.measurements.noise_evaluations).toMatchObject({ total: 3, by_purpose: { seed: 3 } });
    expect(receipt.settings.noise_repeats).toBe(3);
    await replayMatches(out);
  });

  it("moves the incumbent only for a different program whose repeats clear the incumbent's beyond the noise", {
    timeout: 300_000,
  }, async () => {
    const out = join(tempDir(), "noisy");
    const r = await optimize(variant(), out, 3);
    expect(r.code, r.stderr).toBe(0);
    const rec = read(out);
    expect(rec.noise?.stochastic).toBe(1);
    let incumbentProgram = sha(readFileSync(join(FIXTURE, "initial_program.py"), "utf8"));
    for (const round of rec.rounds) {
      const promoted = rec.decisions.filter((d) => d.round === round.round && d.decision === "promote");
      expect(promoted.length).toBe(round.moved);
      for (const d of rec.decisions.filter((x) => x.round === round.round && x.rule === "welch_interval")) {
        // Recompute the rule from the recorded repeats: the same interval, and zero excluded exactly when promoted.
        const program = sha(rec.best.find((b) => b.candidate_id === d.candidate_id)?.best_program ?? "");
        const scores = (p: string) =>
          rec.repeats.filter((x) => x.round === round.round && x.program_sha === p).map((x) => x.score as number);
        const again = clearsNoise(scores(program), scores(incumbentProgram), { direction: "maximize", floorSd: rec.noise?.sd });
        expect(JSON.parse(d.detail ?? "{}").interval).toEqual(again.interval);
        expect(again.better || d.decision !== "promote").toBe(true);
      }
      for (const d of promoted) {
        const program = sha(rec.best.find((b) => b.candidate_id === d.candidate_id)?.best_program ?? "");
        expect(program).not.toBe(incumbentProgram);
        expect(d.rule).toBe("welch_interval");
        incumbentProgram = program;
      }
    }
    expect(rec.repeats.filter((x) => x.purpose === "seed").length).toBe(3);
    await replayMatches(out);
  });

  it("a deterministic evaluator shows zero spread at the cost of one evaluation and a promotion's confirmation; a declared one costs nothing", {
    timeout: 300_000,
  }, async () => {
    const seeded = join(tempDir(), "seeded");
    expect((await optimize(variant({ noise: "seeded" }), seeded, 1)).code).toBe(0);
    const a = read(seeded);
    expect(a.noise).toMatchObject({ stochastic: 0, basis: "measured", n: 2, sd: 0 });
    // Beyond the seed's two, only the re-evaluations that confirm a promotion's score (3 each, all reproducing it).
    expect(a.repeats.filter((x) => x.purpose === "seed").length).toBe(2);
    const promotions = a.decisions.filter((d) => d.decision === "promote").length;
    expect(a.repeats.filter((x) => x.purpose !== "seed").length).toBe(3 * promotions);
    expect(a.decisions.every((d) => ["strictly_better", "same_program", "no_valid_score"].includes(d.rule))).toBe(true);
    const declared = join(tempDir(), "declared");
    expect((await optimize(variant({ noise: "seeded", stochastic: false }), declared, 1)).code).toBe(0);
    const b = read(declared);
    expect(b.noise).toMatchObject({ stochastic: 0, basis: "declared", n: 1 });
    expect(b.repeats.length).toBe(1);
  });
});
