import { join } from "node:path";
import * as z from "zod";
import { type Archive, bestMeasured, type Candidate, type Method, type Proposal, type ProposeContext } from "../method.ts";
import {
  childrenCounts,
  chooseParents,
  chooseTarget,
  compiled,
  type DgmEntry,
  type DgmResults,
  type DgmTarget,
  keepChild,
  parentProbabilities,
} from "../rules/dgm.ts";
import { hyperParent, hyperProbabilities } from "../rules/hyperagents.ts";
import { diagnosePrompt, diagnoseSystem, problemStatement, SELF_IMPROVE_SYSTEM, selfImprovePrompt } from "./dgm-prompts.ts";
import { ask, candidateDir, field, jsonObject, readAnswer, writeFolder } from "./folder-proposal.ts";
import { normaliser, type ScoreScale, scaleOf, unitNormaliser } from "./score-scale.ts";
import { traceLog } from "./traces.ts";

const SEED = "r00-seed";

const params = z
  .object({
    /** DGM's choose_selfimproves_method (+ its no_darwin baseline), or HyperAgents' score_child_prop on the same archive. */
    selection: z
      .enum(["score_child_prop", "score_prop", "random", "best", "no_darwin", "hyperagents"])
      .default("score_child_prop"),
    /** DGM's update_archive. */
    archive_update: z.enum(["keep_all", "keep_better"]).default("keep_all"),
    /** DGM's eval_noise: keep_better's leeway below the initial score, on the normalised scale. */
    eval_noise: z.number().min(0).max(1).default(0.1),
    /** How scores are put on DGM's [0, 1] scale (score-scale.ts): auto = unit for QA, relative for discovery tasks. */
    score_scale: z.enum(["auto", "unit", "relative", "range"]).default("auto"),
    /** diagnose_problem's max_attempts. */
    diagnose_attempts: z.number().int().min(1).max(5).default(3),
  })
  .strict();
type Params = z.infer<typeof params>;

/** DGM's archive: the initial agent, then every child its archive rule kept (in the order they were measured). */
export function dgmMembers(archive: Archive): Candidate[] {
  return archive.candidates.filter((c) => c.id === SEED || (c.status === "measured" && c.kept?.keep === true));
}

const scaleFromState = (c: Candidate): ScoreScale =>
  ((c.state?.dgm as { scale?: ScoreScale } | undefined)?.scale ?? "relative") as ScoreScale;

/** The archive as DGM's rules read it: ids, parents and normalised scores (an unmeasured entry scores 0). */
export function dgmEntries(archive: Archive, scale: ScoreScale): DgmEntry[] {
  const norm = normaliser(scale, archive);
  return dgmMembers(archive).map((c) => ({
    id: c.id,
    parent: c.id === SEED ? null : (c.parents[0] ?? null),
    score: typeof c.measured?.score === "number" ? norm(c.measured.score) : 0,
  }));
}

/**
 * A candidate's results as DGM's target rule reads them: a task with no valid result is an "empty patch"; on the unit
 * scale a task at the top of the scale is resolved; every other task (and every discovery task) is unresolved.
 */
export function dgmResults(c: Candidate, scale: ScoreScale, direction: Archive["direction"]): DgmResults {
  const resolved: string[] = [];
  const unresolved: string[] = [];
  const emptyPatch: string[] = [];
  const top = unitNormaliser(direction);
  for (const [task, s] of Object.entries(c.measured?.perTask ?? {})) {
    if (s === null) emptyPatch.push(task);
    else if (scale === "unit" && top(s) >= 1) resolved.push(task);
    else unresolved.push(task);
  }
  const contextExceeded = (c.measured?.feedback ?? []).some((f) => /context (length|window)|too long for the model/i.test(f));
  return { resolved, unresolved, emptyPatch, contextExceeded };
}

function drawParents(entries: DgmEntry[], k: number, selection: Params["selection"], rand: () => number) {
  if (selection !== "hyperagents") {
    const probs = selection === "score_child_prop" || selection === "score_prop" || selection === "random";
    const p = probs ? parentProbabilities(entries, selection) : [];
    return {
      parents: chooseParents(entries, k, selection, rand),
      probabilities: Object.fromEntries(p.map((x, i) => [entries[i]?.id, x])),
    };
  }
  const nodes = entries.map((e) => ({ ...e, validParent: true }));
  const p = hyperProbabilities(nodes, "score_child_prop");
  const parents = Array.from({ length: k }, () => hyperParent(nodes, "score_child_prop", rand)).filter(
    (x): x is string => x !== undefined,
  );
  return { parents, probabilities: Object.fromEntries(p.map((x, i) => [entries[i]?.id, x])) };
}

const DIAGNOSIS_FIELDS = ["implementation_suggestion", "problem_description"];

/** DGM's diagnose_problem: the diagnosis JSON, asked again (as a new sample) up to `attempts` times. */
async function diagnose(ctx: ProposeContext<Params>, parent: Candidate, target: DgmTarget, slot: number) {
  const task = ctx.task.description;
  const instance = typeof target === "string" ? undefined : target.instance;
  const score = instance ? parent.measured?.perTask[instance] : undefined;
  const evidence = {
    task,
    metric: `${ctx.task.metric}, ${ctx.task.direction === "maximize" ? "higher" : "lower"} is better`,
    log: parent.measured?.trajectories[0] ? traceLog(parent.measured.trajectories[0]) : "",
    result: [score === undefined ? "" : `score: ${score ?? "no valid result"}`, ...(parent.measured?.feedback ?? [])]
      .filter(Boolean)
      .join("\n"),
  };
  const messages = [
    { role: "system" as const, content: diagnoseSystem(ctx.files(parent.id)) },
    { role: "user" as const, content: diagnosePrompt(target, evidence) },
  ];
  let why = "";
  for (let attempt = 0; attempt < ctx.params.diagnose_attempts; attempt++) {
    const r = await ask(ctx, messages, slot * 10 + attempt);
    if ("error" in r) {
      why = r.error;
      continue;
    }
    const o = jsonObject(r.text);
    if (typeof o === "string") why = o;
    else if (DIAGNOSIS_FIELDS.some((f) => !field(o, f))) why = `the diagnosis lacks ${DIAGNOSIS_FIELDS.join(" or ")}`;
    else return { o, statement: problemStatement(field(o, "implementation_suggestion"), field(o, "problem_description")) };
  }
  return `no diagnosis after ${ctx.params.diagnose_attempts} attempts: ${why}`;
}

interface Child {
  dir?: string;
  problem?: string;
  diagnosis?: { o: Record<string, unknown>; statement: string };
  rationale?: string;
}

/** One self-improvement: diagnose the parent on its target, then let the coding agent rewrite the parent's harness. */
async function selfImprove(ctx: ProposeContext<Params>, parent: Candidate, target: DgmTarget, slot: number): Promise<Child> {
  const base = candidateDir(ctx, parent);
  if (!base) return { problem: `${parent.id} has no harness folder` };
  const d = await diagnose(ctx, parent, target, slot);
  if (typeof d === "string") return { problem: d };
  const files = ctx.files(parent.id);
  const messages = [
    { role: "system" as const, content: SELF_IMPROVE_SYSTEM },
    { role: "user" as const, content: selfImprovePrompt(d.statement, files) },
  ];
  const r = await ask(ctx, messages, slot * 10 + 9);
  const answer = "error" in r ? r.error : readAnswer(r.text);
  if (typeof answer === "string") return { problem: `the self-improvement wrote no harness: ${answer}`, diagnosis: d };
  const dir = join(ctx.scratch, `dgm-${slot}`);
  const problem = writeFolder(dir, base, answer.files);
  if (problem) return { problem: `the self-improvement wrote no harness: ${problem}`, diagnosis: d };
  return { dir, diagnosis: d, rationale: field(answer.o, "rationale") || field(d.o, "improvement_proposal") };
}

/**
 * The Darwin Gödel Machine (jennyzzt/dgm): an archive of agents that grows open-endedly. Each round draws K parents
 * from the archive (score_child_prop: p ∝ sigmoid(10·(s − 0.5))/(1 + children), scores normalised by score-scale.ts),
 * picks a target per parent (a failed task instance, or empty results / stochasticity / context length), diagnoses it
 * from the parent's log, and the coding agent rewrites the parent's harness into a child folder. Children whose
 * measurement compiles enter the archive (keep_all) or only when within the leeway of the initial score
 * (keep_better). Rules: rules/dgm.ts (and rules/hyperagents.ts for selection=hyperagents).
 */
export const dgm: Method<Params> = {
  name: "dgm",
  summary: "Darwin Gödel Machine: an archive of harnesses, parents ∝ sigmoid·1/(1+children), diagnosis then self-rewrite",
  edits: "folder",
  params,
  startFrom: "seed",
  async propose(ctx) {
    const scale = scaleOf(ctx.params.score_scale, ctx.task);
    const entries = dgmEntries(ctx.archive, scale);
    const drawn = drawParents(entries, ctx.k, ctx.params.selection, ctx.rng);
    const children = Object.fromEntries(childrenCounts(entries));
    const base = {
      generation: ctx.round,
      scale,
      selection: ctx.params.selection,
      archive: entries.map((e) => e.id),
      children,
      probabilities: drawn.probabilities,
    };
    const out: Proposal[] = [];
    for (const [slot, id] of drawn.parents.entries()) {
      const parent = ctx.archive.candidates.find((c) => c.id === id) as Candidate;
      const target = chooseTarget(dgmResults(parent, scale, ctx.archive.direction), ctx.rng);
      if (!target) continue; // DGM skips a parent with nothing left to solve
      const r = await selfImprove(ctx, parent, target, slot);
      const diagnosis = r.diagnosis
        ? { statement: r.diagnosis.statement.slice(-4000), proposal: field(r.diagnosis.o, "improvement_proposal") }
        : undefined;
      const state = { dgm: { ...base, parent: id, target, ...(diagnosis ? { diagnosis } : {}) } };
      // A self-improvement that wrote nothing is recorded as a child that did not compile, as DGM's metadata lists it.
      if (!r.dir)
        out.push({ parents: [id], rationale: `no child: ${r.problem}`, state: { dgm: { ...state.dgm, failed: r.problem } } });
      else out.push({ parents: [id], dir: r.dir, rationale: r.rationale, state });
    }
    return out;
  },
  keep(archive, candidate, p) {
    if (candidate.id === SEED) return { keep: true, rule: "initial", reason: "DGM's archive starts with the initial agent" };
    const per = Object.values(candidate.measured?.perTask ?? {});
    const tasks = Object.keys(archive.candidates.find((c) => c.id === SEED)?.measured?.perTask ?? {}).length || per.length;
    const valid = per.filter((s) => s !== null).length;
    if (!compiled({ resolved: 0, unresolved: valid, submitted: per.length }, tasks))
      return { keep: false, rule: "not_compiled", reason: `${valid} of ${tasks} task(s) have a valid result` };
    if (p.archive_update === "keep_all")
      return { keep: true, rule: "keep_all", reason: "every compiled child enters the archive" };
    const norm = normaliser(scaleFromState(candidate), archive);
    const initial = archive.candidates.find((c) => c.id === SEED)?.measured?.score;
    const s = norm(candidate.measured?.score as number);
    const s0 = typeof initial === "number" ? norm(initial) : 0;
    const keep = keepChild(s, s0, "keep_better", p.eval_noise);
    const f = (x: number) => x.toFixed(3);
    return {
      keep,
      rule: "keep_better",
      reason: `normalised ${f(s)} ${keep ? "≥" : "<"} initial ${f(s0)} − leeway ${p.eval_noise}`,
    };
  },
  choose: (archive) => bestMeasured(archive, true),
};
