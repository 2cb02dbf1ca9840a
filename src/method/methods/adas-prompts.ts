// Meta Agent Search's prompts, in hone's words (ShengranHu/ADAS _mgsm/mgsm_prompt.py: the base prompt with the
// archive, Reflexion_prompt_1 and _2; _mgsm/search.py: the debug request). A design there is a Python forward()
// function; here it is a harness folder: the files it writes over the initial harness.
import type { TaskBrief } from "../method.ts";
import { HARNESS_FORMAT, harnessBlocks } from "./folder-proposal.ts";

export const ADAS_SYSTEM = `hone-role: meta-agent
You are a helpful assistant. Answer with one well-formed JSON object.`;

/** One archive entry as the meta agent reads it. */
export interface ShownEntry {
  name: string;
  thought: string;
  generation: number | "initial";
  fitness: string;
  /** The files the design writes over the initial harness. */
  files: Record<string, string | null>;
}

const ARCHIVE_CHARS = 60_000;

/** The archive as JSON, oldest first; the oldest designs' files are left out when it grows past its size. */
export function archiveText(entries: readonly ShownEntry[]): string {
  const shown = entries.map((e) => ({ ...e }));
  let text = JSON.stringify(shown, null, 1);
  for (let i = 0; text.length > ARCHIVE_CHARS && i < shown.length; i++) {
    (shown[i] as Partial<ShownEntry>).files = undefined;
    text = JSON.stringify(shown, null, 1);
  }
  return text;
}

const EXAMPLE = {
  thought:
    "**Insights:** what the archive suggests.\n**Overall idea:** the design and why it should work.\n**Implementation:** the files it changes.",
  name: "Name of the design",
  files: { "prompt.md": "The whole new text of the system prompt …", "skills/plan/SKILL.md": "---\nname: plan\n…" },
};

const MISTAKES = `## Mistakes to avoid
1. Removing or renaming a required tool (view_program, edit_program, evaluate_program, finish): the harness is refused.
2. A skill or tool file that is not listed in agent.yaml, or listed with a path that does not exist.
3. A file given only in part: every file you list replaces the old one whole.
4. Advice that names a particular answer or solution: a design must help on any instance of the task.
5. A design that only changes numbers of an earlier one: that is tuning, not a new design.`;

const goal = (t: TaskBrief) => (t.direction === "maximize" ? "maximize" : "minimize");

/** The meta agent's first prompt of a generation: task, framework, archive, output format. */
export function basePrompt(task: TaskBrief, seedFiles: Readonly<Record<string, string>>, archive: readonly ShownEntry[]): string {
  return `# Overview
You are an expert researcher testing agent designs. Your objective is to design the building blocks of an agent's
harness (its prompt, skills, tools, middleware and control settings) so that a frozen model driven by it does well on
this task:

${task.description}

(metric: ${task.metric}, ${task.direction === "maximize" ? "higher" : "lower"} is better)

# The framework
${HARNESS_FORMAT}

The initial harness, over which every design writes its files:

${harnessBlocks(seedFiles)}

# Discovered design archive
Here is the archive of the designs discovered so far:

${archiveText(archive)}

The fitness is the median and 95% bootstrap confidence interval of the design's score on the tasks it was measured
on. Your GOAL is to ${goal(task)} the fitness.

# Output instruction and example
The first key must be "thought": your reasoning for the design. The second, "name": its name. The last, "files": the
files the design writes over the initial harness, each whole (null deletes one). An example of the format:

${JSON.stringify(EXAMPLE, null, 1)}

${MISTAKES}

# Your task
You know prompting techniques and agent designs from the literature well. Your goal is to ${goal(task)} the fitness by
proposing an interestingly new design. Look at the discovered designs carefully and think about the insights, lessons
or stepping stones they hold. Be creative about the next design to try; draw on related work on agents or on other
fields. Using what the archive teaches and what the literature suggests, give the next interesting design.
THINK OUTSIDE THE BOX.`;
}

/** The design's files as it stands (the initial harness with the design written over it). */
export const designBlocks = (files: Readonly<Record<string, string>>): string =>
  `Your design's files as they stand (the initial harness with your files written over it):\n\n${harnessBlocks(files)}`;

export function reflect1Prompt(previous: ShownEntry | undefined, files: Readonly<Record<string, string>>): string {
  const prev = previous ? `Here is the previous design you tried:\n${JSON.stringify(previous)}\n\n` : "";
  return `${prev}Carefully review the design you proposed and reflect on these points:

1. **Interestingness**: is it interesting or innovative next to the designs in the archive? If not, propose a new
   design that does better. Compare it with the archive's designs CAREFULLY, down to their actual files, and decide
   whether it is new. USE CRITICAL THINKING!
2. **Implementation mistakes**: find any mistake in its files, fix it and give the corrected version. Check the list
   "## Mistakes to avoid".
3. **Improvement**: suggest improvements to the details that could raise its fitness, keeping the overall design
   unless it is not interesting. Check that the files do what they are meant to, remove what is redundant, and do not
   stay too close to the previous design.

Then revise the design, or write the new one, following your reflection. Answer with:
"reflection": your thoughts on its interestingness, its mistakes and its improvements;
"thought": the revised idea (or a new one), in the same form as before;
"name": a name for it (no words like "new" or "improved");
"files": the corrected or improved files, with the fix actually made.

${designBlocks(files)}`;
}

export function reflect2Prompt(files: Readonly<Record<string, string>>): string {
  return `Using the list "## Mistakes to avoid", revise the design further. Put your new reflection in "reflection", repeat the
previous "thought" and "name", and give the corrected "files".

${designBlocks(files)}`;
}

export function debugPrompt(error: string, files: Readonly<Record<string, string>>): string {
  return `Error during evaluation:
${error}
Carefully consider where your latest design went wrong. Using what earlier attempts taught, debug it so that it
carries out the same thought. Repeat your previous thought in "thought" and put your debugging reasoning in
"debug_thought"; give the corrected "files".

${designBlocks(files)}`;
}
