// ADAS's archive read back from hone's: each generation's attempts (candidates whose state names the generation)
// replayed through rules/adas.ts's state machine, and each archived design's bootstrap fitness. Pure functions of
// the archive, so propose, keep and choose agree, and resume and replay rebuild the same archive.
import { createHash } from "node:crypto";
import type { ChatMessage } from "../../model/types.ts";
import { rng } from "../../rng.ts";
import type { Archive, Candidate } from "../method.ts";
import { type AdasEvent, type AdasState, adasStep, bootstrapFitness, type Design, type Fitness } from "../rules/adas.ts";
import type { ScoreScale } from "./score-scale.ts";

export const SEED = "r00-seed";

/** What an ADAS proposal records in its candidate's state. */
export interface AdasCandidateState {
  generation: number;
  attempt: number;
  design: { name: string; thought: string; files: Record<string, string | null> };
  /** The meta agent's conversation up to and including the reply that gave this design (for a debug request). */
  messages: ChatMessage[];
  scale: ScoreScale;
  /** Why the design could not even be written as a folder (then it is an evaluation error like a refusal). */
  problem?: string;
  /** The archive the meta agent was shown: id, name, generation, fitness. */
  archive?: { id: string; name: string; generation: number | "initial"; fitness: string }[];
}

export interface AdasOptions {
  debugMax: number;
  samples: number;
}

export const adasState = (c: Candidate): AdasCandidateState | undefined =>
  (c.state?.adas as AdasCandidateState | undefined) ?? undefined;

/** A candidate's design as the rule's Design (its files and candidate id ride along). */
export function designOf(c: Candidate): Design {
  const s = adasState(c);
  return {
    name: s?.design.name ?? c.id,
    thought: s?.design.thought ?? "",
    code: "",
    candidate: c.id,
    files: s?.design.files ?? {},
  };
}

/** The per-task scores ADAS resamples: failed tasks count 0 on the unit scale and are left out otherwise. */
export function scoresOf(c: Candidate, scale: ScoreScale): number[] {
  const out: number[] = [];
  for (const s of Object.values(c.measured?.perTask ?? {})) {
    if (typeof s === "number") out.push(s);
    else if (scale === "unit") out.push(0);
  }
  return out;
}

/** What the evaluation of an attempt was, as the rule's event; undefined while it is not measured. */
export function eventOf(c: Candidate, scale: ScoreScale): AdasEvent | undefined {
  const problem = adasState(c)?.problem;
  if (problem) return { kind: "eval_error", message: problem };
  if (c.status === "pending") return undefined;
  if (c.status === "refused") return { kind: "eval_error", message: `the harness was refused by its check: ${c.reason ?? ""}` };
  if (c.status === "unmeasurable") return { kind: "eval_error", message: `the rollout failed: ${c.reason ?? ""}` };
  const scores = scoresOf(c, scale);
  if (c.measured?.score === null || scores.length === 0)
    return {
      kind: "eval_error",
      message: `no valid result: ${(c.measured?.feedback ?? []).slice(0, 3).join("; ") || "every evaluation was invalid"}`,
    };
  return { kind: "evaluated", scores };
}

const minMean = (scale: ScoreScale, archive: Archive) =>
  scale === "unit" && archive.direction === "maximize" ? 0.01 : Number.NEGATIVE_INFINITY;

export type Outcome =
  | { status: "pending"; candidate: Candidate }
  | { status: "debug"; state: Extract<AdasState, { at: "debug" }>; candidate: Candidate }
  | { status: "done"; state: Extract<AdasState, { at: "done" }>; candidate: Candidate };

/** Every generation's attempts, in attempt order. */
export function generations(archive: Archive): Map<number, Candidate[]> {
  const out = new Map<number, Candidate[]>();
  for (const c of archive.candidates) {
    const s = adasState(c);
    if (s) out.set(s.generation, [...(out.get(s.generation) ?? []), c]);
  }
  for (const list of out.values()) list.sort((a, b) => (adasState(a)?.attempt ?? 0) - (adasState(b)?.attempt ?? 0));
  return out;
}

/** Where a generation stands: its attempts replayed through the state machine with what hone measured. */
export function outcomeOf(archive: Archive, attempts: readonly Candidate[], o: AdasOptions): Outcome {
  const scale = adasState(attempts[0] as Candidate)?.scale ?? "relative";
  let s: AdasState = { at: "evaluate", attempt: 1, design: designOf(attempts[0] as Candidate) };
  for (const [i, c] of attempts.entries()) {
    const e = eventOf(c, scale);
    if (!e) return { status: "pending", candidate: c };
    s = adasStep(s, e, { debugMax: o.debugMax, minMeanScore: minMean(scale, archive) });
    if (s.at === "done") return { status: "done", state: s, candidate: c };
    if (s.at !== "debug") break;
    const next = attempts[i + 1];
    if (!next) return { status: "debug", state: s, candidate: c };
    s = adasStep(s, { kind: "reply", design: designOf(next) });
  }
  return {
    status: "done",
    state: { at: "done", reason: "the attempts do not follow the generation's states" },
    candidate: attempts.at(-1) as Candidate,
  };
}

const seedOf = (id: string) => createHash("sha256").update(`adas-fitness\u0000${id}`).digest().readUInt32LE(0);
const sig = (x: number) => String(Number(x.toPrecision(6)));

/** ADAS's fitness of a candidate's scores (resampled with a generator seeded by its id), in percent or task units. */
export function fitnessOf(c: Candidate, scores: readonly number[], scale: ScoreScale, samples: number): Fitness {
  const f = bootstrapFitness(scores, rng(seedOf(c.id)), { samples });
  if (scale === "unit") return f;
  return { ...f, text: `95% Bootstrap Confidence Interval: (${sig(f.lower)}, ${sig(f.upper)}), Median: ${sig(f.median)}` };
}

export interface ArchivedDesign {
  candidate: Candidate;
  name: string;
  thought: string;
  generation: number | "initial";
  files: Record<string, string | null>;
  fitness: Fitness;
}

/** ADAS's archive: the initial harness (when measured), then each finished generation's design with its fitness. */
export function adasArchive(archive: Archive, o: AdasOptions, initialScale: ScoreScale): ArchivedDesign[] {
  const out: ArchivedDesign[] = [];
  const seed = archive.candidates.find((c) => c.id === SEED);
  const seedScores = seed ? scoresOf(seed, initialScale) : [];
  if (seed && eventOf(seed, initialScale)?.kind === "evaluated")
    out.push({
      candidate: seed,
      name: "initial harness",
      thought: "The hand-written harness every design starts from.",
      generation: "initial",
      files: {},
      fitness: fitnessOf(seed, seedScores, initialScale, o.samples),
    });
  const gens = [...generations(archive).entries()].sort((a, b) => a[0] - b[0]);
  for (const [generation, attempts] of gens) {
    const r = outcomeOf(archive, attempts, o);
    const entry = r.status === "done" ? r.state.entry : undefined;
    if (!entry) continue;
    const c = archive.candidates.find((x) => x.id === entry.design.candidate) as Candidate;
    const s = adasState(c) as AdasCandidateState;
    out.push({
      candidate: c,
      name: s.design.name,
      thought: s.design.thought,
      generation,
      files: s.design.files,
      fitness: fitnessOf(c, entry.scores, s.scale, o.samples),
    });
  }
  return out;
}
