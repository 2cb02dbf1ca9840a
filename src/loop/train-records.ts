// What a train run keeps in hone.db and reads back: epochs are rounds (round 0 measures the seed), candidates are
// epoch-NN, verdicts are decisions, and every panel measurement is a measurement with its task results.
import { contentHash, listFiles } from "../harness/files.ts";
import type { Verdict } from "../method/criteria.ts";
import { type CandidateInsert, finishRound, insertCandidate } from "../store/candidates.ts";
import type { Db } from "../store/db.ts";
import { allDecisions, insertDecisions } from "../store/decisions.ts";
import { measurements } from "../store/qa.ts";

export const epochId = (epoch: number) => `epoch-${String(epoch).padStart(2, "0")}`;

export interface EpochCandidate {
  id: string;
  round: number;
  status: string;
  commit_sha: string | null;
  gate_error: string | null;
  parent_commit: string;
}

export function epochCandidate(db: Db, epoch: number): EpochCandidate | undefined {
  return db
    .prepare("SELECT id, round, status, commit_sha, gate_error, parent_commit FROM candidates WHERE id = ?")
    .get(epochId(epoch)) as EpochCandidate | undefined;
}

/** The candidate that introduced a commit (its measurement has the candidate's id). */
export function candidateIdOfCommit(db: Db, commit: string): string | undefined {
  return (
    db.prepare("SELECT id FROM candidates WHERE commit_sha = ? ORDER BY round LIMIT 1").get(commit) as { id: string } | undefined
  )?.id;
}

/** Which package files a candidate changed against its incumbent (for the lineage and the console). */
export function changedFiles(candidateDir: string, incumbentDir: string): string[] {
  const before = new Map(listFiles(incumbentDir).map((f) => [f, contentHash(incumbentDir, [f])]));
  const after = new Map(listFiles(candidateDir).map((f) => [f, contentHash(candidateDir, [f])]));
  return [...new Set([...before.keys(), ...after.keys()])].filter((f) => before.get(f) !== after.get(f)).sort();
}

export function recordCandidate(
  db: Db,
  c: Omit<CandidateInsert, "slot" | "ref" | "spec" | "repaired"> & { summary?: string },
): void {
  insertCandidate(
    db,
    "run",
    {
      ...c,
      slot: 0,
      ref: c.commit ? `refs/candidates/${c.id}` : null,
      spec: c.summary ? JSON.stringify({ summary: c.summary }) : null,
      repaired: false,
    },
    "IGNORE",
  );
}

/** An epoch skipped before any verdict (no candidate, an invalid one): the candidate row says why. */
export function recordSkip(db: Db, epoch: number, parent: string, reason: string): void {
  db.transaction(() => {
    recordCandidate(db, {
      id: epochId(epoch),
      round: epoch,
      parentCommit: parent,
      commit: null,
      contentHash: null,
      changed: [],
      status: "invalid",
      gateError: reason,
    });
    finishRound(db, "run", epoch, null, false);
  })();
}

export function recordVerdict(
  db: Db,
  epoch: number,
  candidate: string,
  verdict: Verdict,
  rule: string,
  score: number | null,
): void {
  db.transaction(() => {
    insertDecisions(db, "run", epoch, [
      {
        candidate_id: candidate,
        decision: verdict.decision,
        rule,
        reason: verdict.reason,
        score,
        detail: { loss: Number.isFinite(verdict.loss) ? verdict.loss : String(verdict.loss), ...verdict.report },
      },
    ]);
    db.prepare("UPDATE candidates SET score = ? WHERE id = ?").run(score, candidate);
  })();
}

export interface FinishedEpoch {
  epoch: number;
  moved: boolean;
  skipped: boolean;
  candidate: string | null;
}

/** Finished epochs in order: whether the incumbent moved, whether the epoch was skipped, the candidate commit. */
export function finishedEpochs(db: Db): FinishedEpoch[] {
  const rows = db
    .prepare(
      `SELECT r.round AS epoch, r.moved, c.status, c.commit_sha, d.decision FROM rounds r
       LEFT JOIN candidates c ON c.round = r.round AND c.id LIKE 'epoch-%'
       LEFT JOIN decisions d ON d.round = r.round AND d.candidate_id = c.id
       WHERE r.round > 0 AND r.status = 'finished' ORDER BY r.round`,
    )
    .all() as { epoch: number; moved: number; status: string | null; commit_sha: string | null; decision: string | null }[];
  return rows.map((r) => ({
    epoch: r.epoch,
    moved: r.moved === 1,
    skipped: r.status === "invalid" || r.decision === "unmeasurable",
    candidate: r.commit_sha,
  }));
}

/** A train run's epochs as the CLI prints them (JSON): every decided epoch, and the skipped ones with their reason. */
export function trainSummary(db: Db) {
  const decisions = allDecisions(db);
  const byCandidate = new Map(measurements(db).map((m) => [m.candidate_id, m]));
  const rounds = db
    .prepare("SELECT round, status, incumbent_commit, moved FROM rounds WHERE round > 0 AND status = 'finished' ORDER BY round")
    .all() as { round: number; status: string; incumbent_commit: string; moved: number }[];
  const epochs: Record<string, unknown>[] = [];
  const skipped: { epoch: number; reason: string }[] = [];
  for (const r of rounds) {
    const c = epochCandidate(db, r.round);
    const d = c ? decisions.get(c.id) : undefined;
    if (!c || c.status === "invalid" || !d || d.decision === "unmeasurable") {
      skipped.push({ epoch: r.round, reason: d ? `measurement: ${d.reason}` : (c?.gate_error ?? "no candidate") });
      continue;
    }
    const baseline = byCandidate.get(candidateIdOfCommit(db, r.incumbent_commit) ?? "");
    epochs.push({
      epoch: r.round,
      decision: d.decision,
      reason: d.reason,
      promoted: r.moved === 1,
      baseline_solved: baseline?.solved ?? null,
      candidate_solved: byCandidate.get(c.id)?.solved ?? null,
      candidate: c.commit_sha,
      head: r.moved === 1 ? c.commit_sha : r.incumbent_commit,
    });
  }
  return { epochs, skipped };
}
