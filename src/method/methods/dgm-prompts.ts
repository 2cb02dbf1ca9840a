// DGM's two prompts, in hone's words: the diagnosis (prompts/self_improvement_prompt.py's diagnose_system_message,
// diagnose_prompt and its three target variants) and the self-improvement request (get_problem_description_prompt,
// then the coding agent's task). Written for hone's harness; DGM's private test patch and answer patch have no place
// here: a method never sees a gold answer, a test or the evaluator.
import type { DgmTarget } from "../rules/dgm.ts";
import { HARNESS_FORMAT, harnessBlocks } from "./folder-proposal.ts";

const JSON_ONLY = `Answer in exactly this form, the markers included:

\`\`\`json
<JSON>
\`\`\`

Your answer is parsed by a program: give well-formed JSON and do not write the <JSON> tag itself.`;

const FIELDS_REST = `- "potential_improvements": improvements to the agent's harness that could raise its general ability. The environment
  is already set up; do not spend them on setup.
- "improvement_proposal": ONE high-impact improvement from that list, described in detail: a focused, complete plan.
- "implementation_suggestion": with the harness's description and files in mind, what to add or change to carry the
  plan out; if changing an existing prompt, skill or tool does it, say how, rather than adding a new one.
- "problem_description": the proposal and suggestion phrased as an issue, clear enough for an engineer who reads it and
  the harness to implement it.`;

export function diagnoseSystem(files: Readonly<Record<string, string>>): string {
  return [
    "hone-role: diagnose",
    "Here is the implementation of the agent: its harness package.",
    HARNESS_FORMAT,
    "----- Agent Harness Start -----",
    harnessBlocks(files),
    "----- Agent Harness End -----",
    "Your task is to identify ONE detailed plan that would improve the agent's ability on tasks of this kind. The " +
      "improvement must not be specific to one task instance.",
  ].join("\n\n");
}

const PROMPTS = {
  solve_empty_patches: `Some of the agent's runs ended without any valid result: no program the evaluator accepted, or no answer. The
agent is stochastic and may not always produce one. Handle the runs where it fails to produce a valid result, for
example by asking it to check its result before it finishes, or to try again.`,
  solve_stochasticity: `The agent is stochastic: it may not reach a good result on its first try. Take that into account and propose a way
to handle it, for example trying several times and keeping the best measured result, or giving the agent its earlier
attempts as context.`,
  solve_contextlength: `The agent ran out of its model's context window while working: its input grew too long for the model. Handle the
case where the conversation no longer fits, only where that limit is reached.`,
} as const;

/** The diagnosis prompt for one target: a task instance with its log and results, or one of DGM's three aims. */
export function diagnosePrompt(
  target: DgmTarget,
  evidence: { task: string; log: string; result: string; metric: string },
): string {
  if (typeof target === "string") return `${PROMPTS[target]}\n\n${JSON_ONLY}\n\nIn <JSON>, give these fields:\n${FIELDS_REST}`;
  return `Here is the log of the agent working on a task where it did not succeed (task instance ${target.instance}).

# Agent Running Log
----- Agent Running Log Start -----
${evidence.log || "No log available."}
----- Agent Running Log End -----

# Task
----- Task Start -----
${evidence.task}
----- Task End -----

# Result
What the evaluation reported (${evidence.metric}); the evaluator itself is not shown.
----- Result Start -----
${evidence.result || "No result available. Assume the agent failed."}
----- Result End -----

${JSON_ONLY}

In <JSON>, give these fields:
- "log_summarization": how the agent went about the task, from the log: which tools it used and how, its approach, and
  the problems it met.
${FIELDS_REST}`;
}

/** DGM's problem statement for the coding agent: the harness description, then what to implement. */
export const problemStatement = (implementation: string, problem: string): string =>
  `${HARNESS_FORMAT}\n\n# To Implement\n\n${implementation}\n\n${problem}`;

export const SELF_IMPROVE_SYSTEM = `hone-role: meta-agent
You are a coding agent working on your own harness. Implement the change the issue below describes by rewriting the
harness's files. Keep every change general: nothing specific to one task instance.`;

export function selfImprovePrompt(statement: string, files: Readonly<Record<string, string>>): string {
  return `${statement}

# Your harness's files
${harnessBlocks(files)}

# Answer
One JSON object: {"files": {"<path>": "<the whole new text of the file>", …}, "rationale": "<what you changed and why>"}.
List only the files you change, each in full; a path mapped to null deletes that file.`;
}
