import { type Db, hasTable } from "./db.ts";

/** Why a program was re-evaluated outside any rollout's budget. */
export type NoisePurpose = "seed" | "incumbent" | "candidate" | "control";

export interface NoiseEvaluationRow {
  idx: number;
  valid: number;
  score: number | null;
  reason: string | null;
  seconds: number | null;
  purpose: NoisePurpose;
  /** The evaluation as JSON (metrics, reason, artifacts cut to 2,000 characters each). */
  result: string;
}

/** The recorded re-evaluations of one program in one round, in order. */
export function noiseEvaluations(db: Db, runId: string, round: number, programSha: string): NoiseEvaluationRow[] {
  if (!hasTable(db, "noise_evaluations")) return [];
  return db
    .prepare(
      "SELECT idx, valid, score, reason, seconds, purpose, result FROM noise_evaluations WHERE run_id = ? AND round = ? AND program_sha = ? ORDER BY idx",
    )
    .all(runId, round, programSha) as NoiseEvaluationRow[];
}

export function insertNoiseEvaluation(db: Db, runId: string, round: number, programSha: string, row: NoiseEvaluationRow): void {
  db.prepare(
    "INSERT OR REPLACE INTO noise_evaluations (run_id, round, program_sha, idx, purpose, valid, score, reason, seconds, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  ).run(
    runId,
    round,
    programSha,
    row.idx,
    row.purpose,
    row.valid,
    row.score,
    row.reason?.slice(0, 2000) ?? null,
    row.seconds,
    row.result,
  );
}

/** The run's noise estimate, measured on the seed program in round 0. */
export interface NoiseRow {
  program_sha: string;
  repeats: number;
  stochastic: number;
  basis: string;
  n: number;
  invalid: number;
  mean: number | null;
  sd: number;
  spread: number;
}

export function saveNoise(db: Db, runId: string, row: NoiseRow): void {
  db.prepare(
    "INSERT OR REPLACE INTO noise (run_id, program_sha, repeats, stochastic, basis, n, invalid, mean, sd, spread) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  ).run(runId, row.program_sha, row.repeats, row.stochastic, row.basis, row.n, row.invalid, row.mean, row.sd, row.spread);
}

export function loadNoise(db: Db, runId: string): NoiseRow | undefined {
  if (!hasTable(db, "noise")) return undefined;
  return db
    .prepare("SELECT program_sha, repeats, stochastic, basis, n, invalid, mean, sd, spread FROM noise WHERE run_id = ?")
    .get(runId) as NoiseRow | undefined;
}

/** Re-evaluations by purpose, and their seconds: counted apart from every rollout's budget. */
export function noiseCounts(db: Db): { purpose: string; evaluations: number; invalid: number; seconds: number }[] {
  if (!hasTable(db, "noise_evaluations")) return [];
  return db
    .prepare(
      "SELECT purpose, COUNT(*) AS evaluations, SUM(1 - valid) AS invalid, COALESCE(SUM(seconds), 0) AS seconds FROM noise_evaluations GROUP BY purpose ORDER BY purpose",
    )
    .all() as { purpose: string; evaluations: number; invalid: number; seconds: number }[];
}

/** Records the round whose confirmation refuted a measured deterministic evaluator (the first such round is kept). */
export function saveRefutedRound(db: Db, round: number): void {
  db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('noise_refuted_round', ?)").run(String(round));
}

/** The round `saveRefutedRound` recorded; undefined where none was (or the value is not a round). */
export function refutedRoundOf(db: Db): number | undefined {
  if (!hasTable(db, "meta")) return undefined;
  const row = db.prepare("SELECT value FROM meta WHERE key = 'noise_refuted_round'").get() as { value: string } | undefined;
  const n = row ? Number(row.value) : Number.NaN;
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}
