import { join } from "node:path";
import * as z from "zod";
import { HoneError } from "../../errors.ts";
import type { Archive, Candidate, Method, Proposal, ProposeContext } from "../method.ts";
import { strictlyBetter } from "../rules/sample.ts";
import { ask, candidateDir, field, readAnswer, writeFolder } from "./folder-proposal.ts";
import { commandProblem, runProposerCommand } from "./meta-harness-command.ts";
import { frontierJson, history, type MetaHarnessState, mhState, resultOf, shownRecords, writeLog } from "./meta-harness-log.ts";
import { META_AGENT_SYSTEM, metaAgentPrompt, skillText, taskPrompt } from "./meta-harness-prompts.ts";
import { scaleOf } from "./score-scale.ts";
import { traceLog } from "./traces.ts";

const SEED = "r00-seed";

const params = z
  .object({
    /**
     * The coding agent run once per iteration in the log folder, the task prompt as its last argument (e.g.
     * `claude -p --allowedTools Read,Write,Edit,Glob,Grep,Bash`, `codex exec --full-auto`, or any program). Empty:
     * hone's own meta-agent call per candidate (what the offline model plays).
     */
    command: z
      .string()
      .max(2000)
      .default("")
      .superRefine((c, ctx) => {
        const problem = c.trim() ? commandProblem(c) : undefined;
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
    /** The command's time limit in seconds (upstream's --propose-timeout: 2400; 600 here for small runs). */
    timeout: z.number().int().min(10).max(86_400).default(600),
    /** The meta agent's temperature (the default mode). */
    temperature: z.number().min(0).max(2).default(0.8),
    /** How many of evolution_summary.jsonl's latest rows the meta agent is shown (the command reads them all). */
    summary_rows: z.number().int().min(1).max(500).default(30),
    /** How much of the base's trace the meta agent is shown, in characters. */
    trace_chars: z.number().int().min(1000).max(200_000).default(12_000),
  })
  .strict();
type Params = z.infer<typeof params>;

const percentOf = (ctx: ProposeContext<Params>) => scaleOf("auto", ctx.task) === "unit";

/** The candidates by average, best first (ties: the earlier), those with a score only. */
function ranked(archive: Archive): Candidate[] {
  const scored = archive.candidates.filter((c) => resultOf(c) !== undefined);
  const avg = (c: Candidate) => resultOf(c)?.avg as number;
  return [...scored].sort((a, b) =>
    strictlyBetter(avg(a), avg(b), archive.direction) ? -1 : strictlyBetter(avg(b), avg(a), archive.direction) ? 1 : 0,
  );
}

/**
 * The base of a meta-agent candidate: the frontier's best for an exploitation slot (even), one of the three best
 * candidates drawn by the seeded rng for an exploration slot (odd).
 */
function baseFor(ctx: ProposeContext<Params>, slot: number, best: string | undefined): Candidate | undefined {
  const top = ranked(ctx.archive)
    .filter((c) => c.commit)
    .slice(0, 3);
  const bestC = ctx.archive.candidates.find((c) => c.id === best && c.commit) ?? top[0];
  if (slot % 2 === 0 || top.length === 0) return bestC ?? ctx.archive.candidates.find((c) => c.id === SEED);
  return top[Math.floor(ctx.rng() * top.length)];
}

const tail = (text: string, rows: number) => text.trimEnd().split("\n").slice(-rows).join("\n");

/** hone's own meta agent: one call per candidate, shown the log's summary, the frontier and its base's files and trace. */
async function metaAgentProposals(ctx: ProposeContext<Params>, summary: string, frontier: string): Promise<Proposal[]> {
  const { frontier: f } = history(ctx.archive, percentOf(ctx));
  const out: Proposal[] = [];
  for (let slot = 0; slot < ctx.k; slot++) {
    const base = baseFor(ctx, slot, f.best?.candidate);
    const baseDir = base ? candidateDir(ctx, base) : undefined;
    if (!base || !baseDir) break;
    const trajectory = base.measured?.trajectories[0];
    const content = metaAgentPrompt({
      task: ctx.task,
      iteration: ctx.round,
      slot,
      k: ctx.k,
      summary: tail(summary, ctx.params.summary_rows),
      frontier,
      base: base.id,
      trace: trajectory ? traceLog(trajectory, ctx.params.trace_chars) : "",
      files: ctx.files(base.id),
    });
    const messages = [
      { role: "system" as const, content: META_AGENT_SYSTEM },
      { role: "user" as const, content },
    ];
    const state: MetaHarnessState = { iteration: ctx.round, proposer: "meta-agent", base: base.id };
    const r = await ask(ctx, messages, slot, ctx.params.temperature);
    const completion = "error" in r ? "" : r.text;
    const answer = "error" in r ? r.error : readAnswer(r.text);
    const dir = join(ctx.scratch, `mh-${slot}`);
    const problem = typeof answer === "string" ? answer : writeFolder(dir, baseDir, answer.files);
    if (typeof answer === "string" || problem) {
      out.push({ parents: [base.id], rationale: `no candidate: ${problem}`, state: { meta_harness: state } });
      continue;
    }
    const text = (k: string) => field(answer.o, k) || undefined;
    const s: MetaHarnessState = {
      ...state,
      hypothesis: text("hypothesis") ?? text("rationale"),
      axis: text("axis") ?? (slot % 2 === 0 ? "exploitation" : "exploration"),
      changes: text("changes"),
    };
    out.push({ parents: [base.id], dir, rationale: s.hypothesis, sample: { messages, completion }, state: { meta_harness: s } });
  }
  return out;
}

/** The coding agent: one run in the log folder; what it wrote under new/ (at most k folders) comes back as proposals. */
async function commandProposals(ctx: ProposeContext<Params>, work: string, known: ReadonlySet<string>): Promise<Proposal[]> {
  const state: MetaHarnessState = { iteration: ctx.round, proposer: "command" };
  let got: Awaited<ReturnType<typeof runProposerCommand>>;
  try {
    got = await runProposerCommand({
      command: ctx.params.command,
      prompt: taskPrompt(ctx.task, ctx.round, ctx.k),
      work,
      into: join(ctx.scratch, "mh-new"),
      known,
      timeoutSec: ctx.params.timeout,
      proposer: { chat: ctx.proposer.chat, model: ctx.proposer.model },
    });
  } catch (err) {
    // Meta-Harness loses an iteration whose proposer failed; hone records it as a proposal that wrote nothing.
    if (!(err instanceof HoneError) || err.exit !== "runFailed") throw err;
    return [{ parents: [SEED], rationale: `no candidate: ${err.message}`, state: { meta_harness: state } }];
  }
  const over = got.proposals.slice(ctx.k).map((p) => `${p.name}: over the ${ctx.k} candidate(s) asked for`);
  const refused = [...got.refused, ...over];
  const kept = got.proposals.slice(0, ctx.k);
  if (kept.length === 0)
    return [
      {
        parents: [SEED],
        rationale: `no candidate: the proposer command wrote no usable folder under new/${refused.length ? ` (${refused.join("; ").slice(0, 1000)})` : ""}`,
        state: { meta_harness: { ...state, refused } },
      },
    ];
  return kept.map((p, i) => {
    const s: MetaHarnessState = {
      ...state,
      base: p.parent,
      hypothesis: p.hypothesis ?? p.rationale,
      axis: p.axis,
      changes: p.changes,
      ...(i === 0 && refused.length ? { refused } : {}),
    };
    return { parents: [p.parent], dir: p.dir, rationale: s.hypothesis, state: { meta_harness: s } };
  });
}

/** The frontier a candidate's round left (every candidate of rounds up to its own). */
function frontierAt(archive: Archive, round: number) {
  const upTo = { ...archive, candidates: archive.candidates.filter((c) => c.round <= round) };
  return history(upTo, false).frontier;
}

/**
 * Meta-Harness (stanford-iris-lab/meta-harness): each iteration an agentic proposer is pointed at a folder holding
 * every prior candidate's files, scores and traces, with the frontier (frontier_val.json) and the history of
 * hypotheses and outcomes (evolution_summary.jsonl), and writes new harness folders; hone gates and measures them and
 * updates the frontier (rules/meta-harness.ts). The proposer is a coding-agent command (`--param command=…`, run
 * sealed in the folder) or, by default, hone's own meta-agent call per candidate.
 */
export const metaHarness: Method<Params> = {
  name: "meta-harness",
  summary: "Meta-Harness: a coding agent reads every candidate's files, scores and traces and writes new harness folders",
  edits: "folder",
  params,
  startFrom: "seed",
  async propose(ctx) {
    const work = join(ctx.scratch, "log");
    const records = shownRecords(ctx.archive, (c) => candidateDir(ctx, c));
    const percent = percentOf(ctx);
    writeLog(work, ctx.archive, records, {
      percent,
      texts: { "SKILL.md": skillText(ctx.k), "TASK.md": taskPrompt(ctx.task, ctx.round, ctx.k) },
    });
    const { frontier, rows } = history(ctx.archive, percent);
    if (ctx.params.command.trim()) return commandProposals(ctx, work, new Set(records.map((r) => r.id)));
    const summary = rows.map((r) => JSON.stringify(r)).join("\n");
    return metaAgentProposals(ctx, summary, JSON.stringify(frontierJson(frontier), null, 2));
  },
  keep(archive, candidate) {
    const f = frontierAt(archive, candidate.round);
    const tasks = Object.entries(f.tasks)
      .filter(([, v]) => v.candidate === candidate.id)
      .map(([t]) => t);
    const best = f.best?.candidate === candidate.id;
    const keep = best || tasks.length > 0;
    const where = [...(best ? ["the best average"] : []), ...tasks.map((t) => `best on ${t}`)].join(", ");
    return {
      keep,
      rule: "frontier",
      reason: keep
        ? `on the frontier: ${where}`
        : `not on the frontier (best: ${f.best?.candidate ?? "none"}); it stays in the log the proposer reads`,
    };
  },
  choose(archive) {
    const best = history(archive, false).frontier.best?.candidate;
    return archive.candidates.find((c) => c.id === best);
  },
};

export type { MetaHarnessState };
export const metaHarnessState = mhState;
