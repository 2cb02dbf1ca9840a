// Meta-Harness's log folder, built from hone's archive: every prior candidate's files, scores and traces (as
// external.ts's writeArchive lays them out), the frontier (frontier_val.json) and one evolution_summary.jsonl row per
// proposed candidate, computed with rules/meta-harness.ts round by round as the upstream loop appends them.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ArchiveRecord, writeArchive } from "../external.ts";
import type { Archive, Candidate } from "../method.ts";
import { type CandidateResult, type EvolutionRow, evolutionRows, type Frontier, updateFrontier } from "../rules/meta-harness.ts";

/** What a Meta-Harness proposal records in its candidate's state (pending_eval.json's fields). */
export interface MetaHarnessState {
  iteration: number;
  proposer: "command" | "meta-agent";
  hypothesis?: string;
  axis?: string;
  changes?: string;
  base?: string;
  /** Folders the proposer wrote that hone refused, with the reasons (a command's output only). */
  refused?: string[];
}

export const mhState = (c: Candidate): MetaHarnessState | undefined =>
  (c.state?.meta_harness as MetaHarnessState | undefined) ?? undefined;

/** A candidate's result as the frontier reads it; undefined when it has no score. */
export function resultOf(c: Candidate): CandidateResult | undefined {
  const avg = c.measured?.score;
  if (c.status !== "measured" || typeof avg !== "number" || !Number.isFinite(avg)) return undefined;
  const perTask: Record<string, number> = {};
  for (const [t, s] of Object.entries(c.measured?.perTask ?? {})) if (typeof s === "number") perTask[t] = s;
  return { perTask, avg };
}

/**
 * The frontier after every round and the summary rows of rounds 1…: round 0 (the seed) only seeds the frontier, as
 * upstream's baselines do. Scores are shown in percent only on the unit scale (`percent`).
 */
export function history(archive: Archive, percent: boolean): { frontier: Frontier; rows: EvolutionRow[] } {
  let frontier: Frontier = { tasks: {} };
  const rows: EvolutionRow[] = [];
  const rounds = [...new Set(archive.candidates.map((c) => c.round))].sort((a, b) => a - b);
  for (const round of rounds) {
    const cs = archive.candidates.filter((c) => c.round === round && c.status !== "pending");
    const results = cs.flatMap((c) => {
      const r = resultOf(c);
      return r ? [[c.id, r] as const] : [];
    });
    frontier = updateFrontier(frontier, results, archive.direction);
    if (round === 0) continue;
    const proposed = cs.map((c) => {
      const s = mhState(c);
      return { candidate: c.id, hypothesis: s?.hypothesis ?? c.rationale, axis: s?.axis, changes: s?.changes };
    });
    rows.push(...evolutionRows(round, proposed, Object.fromEntries(results), frontier.best?.avg, { percent }));
  }
  return { frontier, rows };
}

/** frontier_val.json in upstream's layout with hone's names: per task {candidate, score}, and `_best`. */
export const frontierJson = (f: Frontier) => ({
  ...f.tasks,
  ...(f.best ? { _best: { candidate: f.best.candidate, avg_score: f.best.avg } } : {}),
});

/** The candidates whose files can be shown (every committed one: refused proposals left no folder). */
export function shownRecords(archive: Archive, dirOf: (c: Candidate) => string | undefined): ArchiveRecord[] {
  return archive.candidates.flatMap((c) => {
    const dir = c.status === "refused" ? undefined : dirOf(c);
    if (!dir) return [];
    const score = c.measured?.score ?? null;
    const per_task = c.measured?.perTask;
    return [
      {
        id: c.id,
        parent: c.parents[0] ?? null,
        score,
        valid: score !== null,
        per_task,
        dir,
        trajectories: c.measured?.trajectories,
      },
    ];
  });
}

const jsonl = (rows: readonly unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join("");

/**
 * Writes the folder the proposer reads: candidates.jsonl and candidates/<id>/ (writeArchive), traces/<id>/ (each
 * rollout's trajectory, cleaned as traces.ts says), frontier_val.json, evolution_summary.jsonl, an empty reports/ and
 * new/ (where the proposer writes), and the given text files (the task and its instructions).
 */
export function writeLog(
  work: string,
  archive: Archive,
  records: readonly ArchiveRecord[],
  o: { percent: boolean; texts: Record<string, string> },
): void {
  writeArchive(work, records);
  const { frontier, rows } = history(archive, o.percent);
  writeFileSync(join(work, "frontier_val.json"), `${JSON.stringify(frontierJson(frontier), null, 2)}\n`);
  writeFileSync(join(work, "evolution_summary.jsonl"), jsonl(rows));
  mkdirSync(join(work, "reports"), { recursive: true });
  mkdirSync(join(work, "new"), { recursive: true });
  for (const [name, text] of Object.entries(o.texts)) writeFileSync(join(work, name), text);
}
