import { join } from "node:path";
import * as z from "zod";
import type { ChatMessage } from "../../model/types.ts";
import type { Archive, Candidate, Method, Proposal, ProposeContext } from "../method.ts";
import { type AdasEvent, type AdasState, adasAction, adasStep, type Design } from "../rules/adas.ts";
import { strictlyBetter } from "../rules/sample.ts";
import {
  type AdasCandidateState,
  type ArchivedDesign,
  adasArchive,
  adasState,
  generations,
  outcomeOf,
  SEED,
} from "./adas-archive.ts";
import { ADAS_SYSTEM, basePrompt, debugPrompt, reflect1Prompt, reflect2Prompt, type ShownEntry } from "./adas-prompts.ts";
import { ask, candidateDir, field, readAnswer, writeFolder } from "./folder-proposal.ts";
import { type ScoreScale, scaleOf } from "./score-scale.ts";

const params = z
  .object({
    /** ADAS's debug_max: evaluations of a generation's design (the first and its debugged versions). */
    debug_max: z.number().int().min(1).max(10).default(3),
    /** Bootstrap resamples for the fitness (ADAS: 100,000; 10,000 here, ample for the few tasks of a small run). */
    bootstrap_samples: z.number().int().min(100).max(100_000).default(10_000),
    /** The meta agent's temperature (ADAS's get_json_response_from_gpt_reflect: 0.8). */
    temperature: z.number().min(0).max(2).default(0.8),
    /** How fitness is shown and "all 0 accuracy" applied (score-scale.ts): auto = unit for QA, relative otherwise. */
    score_scale: z.enum(["auto", "unit", "relative", "range"]).default("auto"),
  })
  .strict();
type Params = z.infer<typeof params>;

const opts = (p: Params) => ({ debugMax: p.debug_max, samples: p.bootstrap_samples });
const scaleIn = (archive: Archive): ScoreScale =>
  archive.candidates.map(adasState).find((s) => s !== undefined)?.scale ?? "relative";

const shown = (d: ArchivedDesign): ShownEntry => ({
  name: d.name,
  thought: d.thought,
  generation: d.generation,
  fitness: d.fitness.text,
  files: d.files,
});

/** The design's whole harness as text: the initial harness's files with the design's written over them. */
function overSeed(seedFiles: Readonly<Record<string, string>>, files: Readonly<Record<string, string | null>>) {
  const out: Record<string, string> = { ...seedFiles };
  for (const [p, t] of Object.entries(files)) {
    if (t === null) delete out[p];
    else out[p] = t;
  }
  return out;
}

interface Drive {
  ctx: ProposeContext<Params>;
  seedFiles: Readonly<Record<string, string>>;
  prompts: { base: string; previous?: ShownEntry };
  sample: number;
}

/** A reply as the rule's event: the design it gives (its files written over the design so far), or an llm_error. */
async function askFor(d: Drive, messages: ChatMessage[], current: Design | undefined, gen: number): Promise<AdasEvent> {
  const r = await ask(d.ctx, messages, d.sample++, d.ctx.params.temperature);
  if ("error" in r) return { kind: "llm_error", message: r.error };
  const a = readAnswer(r.text);
  if (typeof a === "string") return { kind: "llm_error", message: a };
  const files = { ...((current?.files as Record<string, string | null>) ?? {}), ...a.files };
  const name = field(a.o, "name") || (current?.name ?? `design-g${gen}`);
  const thought = field(a.o, "thought") || field(a.o, "rationale") || (current?.thought ?? "");
  return { kind: "reply", design: { name, thought, code: JSON.stringify(a.o), files } };
}

/** Runs a generation's state machine until its design is to be evaluated (or the generation stops). */
async function drive(d: Drive, s0: AdasState, messages0: ChatMessage[], gen: number) {
  let s = s0;
  let messages = messages0;
  for (;;) {
    const a = adasAction(s);
    if (a.do === "stop") return { stop: a.reason };
    if (a.do === "evaluate") return { design: a.design, attempt: a.attempt, messages };
    const current = "design" in s ? s.design : undefined;
    const files = overSeed(d.seedFiles, (current?.files as Record<string, string | null>) ?? {});
    const content =
      a.purpose === "propose"
        ? d.prompts.base
        : a.purpose === "reflect1"
          ? reflect1Prompt(d.prompts.previous, files)
          : a.purpose === "reflect2"
            ? reflect2Prompt(files)
            : debugPrompt(a.error ?? "", files);
    const asked: ChatMessage[] = [...messages, { role: "user", content }];
    const e = await askFor(d, asked, current, gen);
    messages = e.kind === "reply" ? [...asked, { role: "assistant", content: e.design.code }] : asked;
    s = adasStep(s, e, { debugMax: d.ctx.params.debug_max });
  }
}

/**
 * ADAS / Meta Agent Search (ShengranHu/ADAS): an archive of designs with bootstrap fitness. Each generation the meta
 * agent reads the archive and proposes a new design — here a harness folder, its files written over the initial
 * harness — refines it by two reflections, and the design is evaluated (gate, then rollout); a refusal, a failed
 * rollout or "all 0 accuracy" goes back to the meta agent for a debugged design, up to debug_max evaluations, in the
 * next rounds. K generations run side by side; debugged designs take the round's slots first. Rules: rules/adas.ts.
 */
export const adas: Method<Params> = {
  name: "adas",
  summary: "Meta Agent Search: a meta agent reads the archive of designs with fitness, proposes, reflects twice, debugs on error",
  edits: "folder",
  params,
  startFrom: "seed",
  async propose(ctx) {
    const seed = ctx.archive.candidates.find((c) => c.id === SEED);
    const seedDir = seed ? candidateDir(ctx, seed) : undefined;
    if (!seed || !seedDir) return [];
    const scale = scaleOf(ctx.params.score_scale, ctx.task);
    const seedFiles = ctx.files(SEED);
    const designs = adasArchive(ctx.archive, opts(ctx.params), scale);
    const entries = designs.map(shown);
    const snapshot = designs.map((d) => ({
      id: d.candidate.id,
      name: d.name,
      generation: d.generation,
      fitness: d.fitness.text,
    }));
    const gens = generations(ctx.archive);
    const debugs = [...gens.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([g, attempts]) => ({ g, r: outcomeOf(ctx.archive, attempts, opts(ctx.params)) }))
      .filter((x) => x.r.status === "debug");
    let next = Math.max(0, ...gens.keys()) + 1;
    const base = basePrompt(ctx.task, seedFiles, entries);
    const out: Proposal[] = [];
    for (let slot = 0; slot < ctx.k; slot++) {
      const debug = debugs[slot];
      const gen = debug ? debug.g : next++;
      const d: Drive = { ctx, seedFiles, prompts: { base, previous: gen > 1 ? entries.at(-1) : undefined }, sample: slot * 10 };
      const from = debug?.r.status === "debug" ? debug.r : undefined;
      const r = from
        ? await drive(d, from.state, (adasState(from.candidate) as AdasCandidateState).messages, gen)
        : await drive(d, { at: "propose" }, [{ role: "system", content: ADAS_SYSTEM }], gen);
      if ("stop" in r) continue; // ADAS: a failed meta-agent call loses the generation
      const files = r.design.files as Record<string, string | null>;
      const dir = join(ctx.scratch, `adas-g${gen}-a${r.attempt}`);
      const problem = writeFolder(dir, seedDir, files);
      const state: AdasCandidateState = {
        generation: gen,
        attempt: r.attempt,
        design: { name: r.design.name, thought: r.design.thought, files },
        messages: r.messages,
        scale,
        archive: snapshot,
        ...(problem ? { problem } : {}),
      };
      out.push({
        parents: [from ? from.candidate.id : SEED],
        ...(problem ? {} : { dir }),
        rationale: `${r.design.name}: ${r.design.thought}`.slice(0, 2000),
        state: { adas: state },
      });
    }
    return out;
  },
  keep(archive, candidate, p) {
    const s = adasState(candidate);
    if (!s) return { keep: true, rule: "initial", reason: "the initial harness opens ADAS's archive" };
    const attempts = generations(archive).get(s.generation) ?? [];
    const r = outcomeOf(archive, attempts, opts(p));
    if (r.status === "done" && r.state.entry?.design.candidate === candidate.id) {
      const d = adasArchive(archive, opts(p), s.scale).find((x) => x.candidate.id === candidate.id);
      return { keep: true, rule: "archived", reason: `generation ${s.generation}: ${d?.fitness.text ?? "archived"}` };
    }
    if (r.status === "debug" && r.candidate.id === candidate.id)
      return {
        keep: false,
        rule: "debug",
        reason: `${r.state.error}: sent back to the meta agent (evaluation ${r.state.attempt} of ${p.debug_max})`,
      };
    return { keep: false, rule: "not_archived", reason: r.status === "done" ? r.state.reason : "its generation is still open" };
  },
  choose(archive, p) {
    let best: ArchivedDesign | undefined;
    for (const d of adasArchive(archive, opts(p), scaleIn(archive)))
      if (!best || strictlyBetter(d.fitness.median, best.fitness.median, archive.direction)) best = d;
    return best?.candidate as Candidate | undefined;
  },
};
