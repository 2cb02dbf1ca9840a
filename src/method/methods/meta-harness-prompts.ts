// Meta-Harness's proposer instructions in hone's words (stanford-iris-lab/meta-harness: the meta-harness skill's
// SKILL.md, terminal_bench_2/meta_harness.py's render_task_prompt): for a coding agent pointed at the log folder, and
// the same job condensed into one call for hone's own meta agent.
import type { TaskBrief } from "../method.ts";
import { HARNESS_FORMAT, harnessBlocks } from "./folder-proposal.ts";

const taskText = (t: TaskBrief) =>
  `${t.description.trim()}\n\n(metric: ${t.metric}, ${t.direction === "maximize" ? "higher" : "lower"} is better)`;

const RULES = `## Rules
- Good candidates change a mechanism: how the agent plans, which skills it loads and when, what its tools tell it, how
  its middleware steers it, how it uses its budget. Candidates that only change numbers of an earlier one (parameter
  variants) almost always tie or regress: check evolution_summary.jsonl for what has been tried.
- Combining candidates is fine: the planning of one with the skills of another.
- Nothing specific to one instance of the task: no answers, no solutions, no values of the evaluator.
- Mix exploitation (build on the frontier) and exploration (a different mechanism); if the last iterations all worked on
  one axis, pick another.`;

/** The instructions a coding agent reads in the folder (SKILL.md). */
export function skillText(k: number): string {
  return `# Meta-Harness: one iteration of harness evolution

Run ONE iteration and do all of it yourself. You do NOT run the task: you analyse results and traces and write new
harness candidates; the outer loop (hone) checks and measures them.

${HARNESS_FORMAT}

${RULES}

## Workflow
1. Read the state: \`evolution_summary.jsonl\` (one row per earlier candidate: hypothesis, axis, score, delta),
   \`frontier_val.json\` (the best candidate per task and \`_best\`), \`candidates.jsonl\` (every candidate's scores),
   \`candidates/<id>/\` (its harness files) and \`traces/<id>/trajectory.jsonl\` (what its agent did). Write short notes
   in \`reports/\` if they help you; they are not kept.
2. Form ${k} falsifiable hypotheses, each aimed at a different mechanism.
3. For each: copy a top-performing candidate's folder \`candidates/<id>/\` to \`new/<name>/\` (name: letters, digits,
   \`.\`, \`_\`, \`-\`), then change it to carry out the hypothesis. Re-read what you wrote: is it a new mechanism or a
   parameter variant? Rewrite it if it is a variant.
4. In each \`new/<name>/\` write \`proposal.json\`:
   {"parent": "<the candidate id you copied>", "hypothesis": "<falsifiable claim>", "axis": "exploitation|exploration",
    "changes": "<what you changed>"}
Only \`new/\` is read back; everything else in this folder is a copy. End by printing \`CANDIDATES: <name>, …\`.
`;
}

/** The task prompt (render_task_prompt): what to do this iteration and where everything is. */
export function taskPrompt(task: TaskBrief, iteration: number, k: number): string {
  return `Run iteration ${iteration} of the harness evolution loop on the task "${task.id}". Write exactly ${k} new candidate(s).
Read SKILL.md in this folder first and follow it.

## Task
${taskText(task)}

## Run directory (this folder)
- evolution_summary.jsonl — past results
- frontier_val.json — the frontier
- candidates.jsonl, candidates/<id>/ — every candidate's scores and harness files
- traces/<id>/trajectory.jsonl — every rollout's trace
- reports/ — your notes
- new/<name>/ with proposal.json — where your candidates go
`;
}

export const META_AGENT_SYSTEM = `hone-role: meta-agent
You are the proposer of a harness evolution loop (Meta-Harness). You analyse the results and traces of earlier
harness candidates and write one new candidate: a copy of a top-performing harness with a new mechanism in it.

${RULES}`;

/** hone's own meta agent's request for one candidate: the summary, frontier, the base's trace and files. */
export function metaAgentPrompt(o: {
  task: TaskBrief;
  iteration: number;
  slot: number;
  k: number;
  summary: string;
  frontier: string;
  base: string;
  trace: string;
  files: Readonly<Record<string, string>>;
}): string {
  const axis = o.slot % 2 === 0 ? "exploitation (build on the frontier)" : "exploration (a different mechanism)";
  return `Iteration ${o.iteration}, candidate ${o.slot + 1} of ${o.k}: make this one ${axis}.

## Task
${taskText(o.task)}

## evolution_summary.jsonl (latest rows)
${o.summary || "(no candidates yet)"}

## frontier_val.json
${o.frontier}

## The trace of ${o.base}, the frontier's best (your base)
${o.trace || "(no trace)"}

## The files of ${o.base}
${harnessBlocks(o.files)}

## Answer
One JSON object: {"files": {"<path>": "<the whole new text>", …}, "hypothesis": "<falsifiable claim>", "axis":
"exploitation|exploration", "changes": "<what you changed>"}. List only the files you change, each whole; null deletes
a file. Everything else stays as in ${o.base}.`;
}
