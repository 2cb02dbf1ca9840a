import type { Archive, Candidate } from "../../method.ts";
import { aggregate, type Front, type KeyScores, paretoFront } from "../../rules/gepa.ts";
import {
  afterMerge,
  afterReflective,
  emptyMergeLog,
  type MergeLog,
  type MergeSchedule,
  mergeSchedule,
} from "../../rules/gepa-merge.ts";
import { oriented } from "../../rules/sample.ts";

/**
 * GEPA's state over an archive of hone candidates. GEPA keeps its candidate pool, per-key frontier, component pointers,
 * merge log and merge schedule in memory; here each proposal records what it was (`state.gepa`: kind, component,
 * minibatch, pointer, merge triplet, the schedule and frontier it saw) and everything else is rebuilt from the
 * archive at each round, so a resumed or replayed run reads the same state.
 *
 * - Pool: the seed and every candidate GEPA accepted (its keep rule), in archive order; rejected children never enter
 *   it, as in GEPA, where a child that fails the minibatch test is discarded.
 * - Scores: `measured.perTask` oriented to higher-is-better; a null (invalid or failed) key counts as not evaluated.
 * - Pointer of a pool member at a round: where it started (the largest of its parents' pointers after they were
 *   advanced, recorded in its state; 0 for the seed) plus one per reflective proposal drawn from it in earlier rounds.
 * - Schedule: replayed round by round from the recorded kinds and keep decisions (gepa-merge.ts).
 */

export interface MergeMemo {
  i: string;
  j: string;
  ancestor: string;
  sources: string[];
  subsample: string[];
  before: number[];
}

export interface GepaMemo {
  kind: "reflective" | "merge";
  iteration: number;
  pointer: number;
  component?: string;
  minibatch?: string[];
  /** The parent's oriented scores on the minibatch (reflective). */
  before?: (number | null)[];
  merge?: MergeMemo;
  schedule: MergeSchedule;
  frontier: Record<string, string[]>;
}

/** The GEPA record of a candidate's proposal, when it has one. */
export function gepaMemo(c: Candidate): GepaMemo | undefined {
  const g = c.state?.gepa as Partial<GepaMemo> | undefined;
  if (!g || typeof g !== "object" || (g.kind !== "reflective" && g.kind !== "merge")) return undefined;
  return g as GepaMemo;
}

export interface Pool {
  members: Candidate[];
  index: Map<string, number>;
  scores: KeyScores[];
  aggregates: number[];
  front: Front;
}

/** A candidate's per-key scores, oriented (higher is better), invalid keys left out. */
export function orientedScores(c: Candidate, archive: Archive): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(c.measured?.perTask ?? {}))
    if (typeof v === "number" && Number.isFinite(v)) out[k] = oriented(v, archive.direction);
  return out;
}

const inPool = (c: Candidate) => c.status === "measured" && (c.id === "r00-seed" || c.kept?.keep === true);

export function gepaPool(archive: Archive): Pool {
  const members = archive.candidates.filter(inPool);
  const scores = members.map((c) => orientedScores(c, archive));
  return {
    members,
    index: new Map(members.map((c, i) => [c.id, i])),
    scores,
    aggregates: scores.map(aggregate),
    front: paretoFront(scores),
  };
}

/** The frontier by candidate id (for the record). */
export function frontierIds(pool: Pool): Record<string, string[]> {
  return Object.fromEntries(
    [...pool.front].map(([key, cell]) => [key, [...cell.members].map((i) => pool.members[i]?.id as string)]),
  );
}

/** GEPA's train ids: the keys the seed was measured on (any measured pool member's when the seed has none). */
export function trainKeys(pool: Pool): string[] {
  const withKeys = pool.scores.find((s) => Object.keys(s).length > 0) ?? {};
  return Object.keys(withKeys).sort();
}

const reflectiveFrom = (archive: Archive, id: string, before: number) =>
  archive.candidates.filter((c) => c.round < before && c.parents[0] === id && gepaMemo(c)?.kind === "reflective").length;

/** Each pool member's component pointer at the start of `round` (not reduced modulo the component count). */
export function pointersAt(archive: Archive, pool: Pool, round: number): number[] {
  return pool.members.map((c) => (c.id === "r00-seed" ? 0 : (gepaMemo(c)?.pointer ?? 0)) + reflectiveFrom(archive, c.id, round));
}

/** The merge schedule at the start of `round`, replayed from every earlier round's proposals and decisions. */
export function scheduleAt(archive: Archive, round: number, max: number): MergeSchedule {
  let s = mergeSchedule(max);
  for (let r = 1; r < round; r++) {
    const mine = archive.candidates.filter((c) => c.round === r && gepaMemo(c));
    if (mine.length === 0) {
      s = { ...s, foundNew: false };
      continue;
    }
    if (gepaMemo(mine[0] as Candidate)?.kind === "merge") {
      s = afterMerge(s, mine[0]?.kept?.keep === true);
      continue;
    }
    const accepted = mine.filter((c) => c.kept?.keep === true).length;
    if (accepted === 0) s = afterReflective(s, false);
    for (let n = 0; n < accepted; n++) s = afterReflective(s, true);
  }
  return s;
}

/** The merges already tried, as pool indices (GEPA's `merges_performed`). */
export function mergeLogOf(archive: Archive, pool: Pool): MergeLog {
  const log = emptyMergeLog();
  for (const c of archive.candidates) {
    const m = gepaMemo(c)?.merge;
    if (!m) continue;
    const [i, j, a] = [pool.index.get(m.i), pool.index.get(m.j), pool.index.get(m.ancestor)];
    if (i === undefined || j === undefined || a === undefined) continue;
    log.triplets.push([i, j, a]);
    const sources = m.sources.map((id) => pool.index.get(id));
    if (sources.every((x) => x !== undefined)) log.descriptions.push([i, j, sources as number[]]);
  }
  return log;
}

/** Each pool member's parents as pool indices (null for the seed), for the merge rules' ancestry. */
export function poolParents(pool: Pool): (number | null)[][] {
  return pool.members.map((c) => {
    const ps = c.parents.map((p) => pool.index.get(p)).filter((x): x is number => x !== undefined);
    return ps.length ? ps : [null];
  });
}
