// What a train run keeps in hone.db and reads back: epochs are rounds (round 0 measures the seed), candidates are
// epoch-NN, verdicts are decisions, and every panel measurement is a measurement with its task results.
import { renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { contentHash, listFiles } from "../harness/files.ts";
import type { Verdict } from "../method/criteria.ts";
import { writeJsonAtomic } from "../store/atomic.ts";
import { type CandidateInsert, finishRound, insertCandidate } from "../store/candidates.ts";
import type { Db } from "../store/db.ts";
import { allDecisions, insertDecisions } from "../store/decisions.ts";
import type { HarnessRepo } from "../store/git.ts";
import { measurements } from "../store/qa.ts";

export const epochId = (epoch: number) => `epoch-${String(epoch).padStart(2, "0")}`;

/** The re-measure of a candidate's crashed tasks (after an unmeasurable verdict). */
export const retryId = (candidate: string) => `${candidate}-retry`;

/** The measurement of a candidate's harness on the held-out split. */
export const heldOutId = (candidate: string) => `${candidate}-held-out`;

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
  const all = measurements(db);
  // A candidate's panel measurement has its id; its re-measure and held-out ones are others of the same candidate.
  const byCandidate = new Map(all.filter((m) => m.id === m.candidate_id).map((m) => [m.candidate_id, m]));
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
    // A finished re-measure of a candidate's crashed tasks stands in for their first results (as the verdict read them).
    const solved = (id: string | undefined) => {
      const m = id === undefined ? undefined : byCandidate.get(id);
      if (m?.solved == null) return null;
      const again = all.find((x) => x.id === retryId(m.id) && x.status === "finished");
      return m.solved + (again?.solved ?? 0);
    };
    const baseline = candidateIdOfCommit(db, r.incumbent_commit);
    epochs.push({
      epoch: r.round,
      decision: d.decision,
      reason: d.reason,
      promoted: r.moved === 1,
      baseline_solved: solved(baseline),
      candidate_solved: solved(c.id),
      candidate: c.commit_sha,
      head: r.moved === 1 ? c.commit_sha : r.incumbent_commit,
    });
  }
  return { epochs, skipped, held_out: heldOutOf(db, all) };
}

/** The held-out split's results, of the seed and of HEAD (the seed's again when HEAD is the seed); null without one. */
function heldOutOf(db: Db, all: ReturnType<typeof measurements>) {
  const of = (commit: string | null | undefined) => {
    const m = commit ? all.find((x) => x.id === heldOutId(candidateIdOfCommit(db, commit) ?? "")) : undefined;
    return (
      m && { commit: m.commit_sha, solved: m.solved, infra: m.infra, score: m.mean_score, finished: m.status === "finished" }
    );
  };
  const seedCommit = epochCandidate(db, 0)?.commit_sha;
  const seed = of(seedCommit);
  if (!seed) return null;
  const headCommit =
    finishedEpochs(db)
      .filter((e) => e.moved && e.candidate)
      .at(-1)?.candidate ?? seedCommit;
  const m = all.find((x) => x.id === heldOutId("epoch-00"));
  return { split: m?.split ?? null, tasks: m?.tasks ?? 0, seed, head: of(headCommit) ?? null };
}

/**
 * best/: HEAD's package as a folder a user can run or evaluate (`hone eval --harness runs/…/best`), with meta.json
 * saying which commit it is, the epoch that made it and its panel and held-out results; rewritten whole at each end.
 */
export function writeBest(
  dir: string,
  repo: HarnessRepo,
  db: Db,
  head: string,
  heldOut: ReturnType<typeof trainSummary>["held_out"],
): string {
  const best = join(dir, "best");
  const building = `${best}.new`;
  rmSync(building, { recursive: true, force: true });
  repo.materialize(head, building);
  const id = candidateIdOfCommit(db, head) ?? null;
  const panel = measurements(db).find((m) => m.id === id);
  const epoch = db.prepare("SELECT round FROM candidates WHERE id = ?").get(id) as { round: number } | undefined;
  const meta = {
    commit: head,
    candidate: id,
    epoch: epoch?.round ?? null,
    benchmark: panel?.benchmark ?? null,
    panel: panel ? { split: panel.split, tasks: panel.tasks, solved: panel.solved, score: panel.mean_score } : null,
    held_out: heldOut,
  };
  writeJsonAtomic(join(building, "meta.json"), meta);
  rmSync(best, { recursive: true, force: true });
  renameSync(building, best);
  return best;
}
