import type { ChatMessage } from "../../../model/types.ts";
import type { SkillEdit } from "../../rules/skillopt.ts";
import { componentBlock, extractJson, fence } from "./fenced.ts";
import { editsBetween } from "./skill-edits.ts";

/**
 * SkillOpt's analyst prompts (microsoft/SkillOpt bdfdc30, skillopt/prompts/analyst_error.md and analyst_success.md,
 * assembled as gradient/reflect.py does: current skill, edit budget L, previous steps of the epoch, trajectories), in
 * hone's own words, and the reading of its reply. The skill travels as a ```component skill_body.<name>``` block;
 * `hone-role: skillopt-analyst` lets the offline model answer.
 */

export interface AnalystInput {
  skillName: string;
  skill: string;
  budget: number;
  /** The step buffer as formatted by rules/skillopt.ts `formatStepBuffer` (empty in an epoch's first step). */
  buffer: string;
  /** The trajectories of the step's rollout, already rendered and quoted. */
  trajectories: string[];
  failed: boolean;
}

const ERROR_RULES = [
  "You analyse failures of an AI agent. You get the failed trajectories of one minibatch and the skill document the agent used.",
  "Find the most important failure patterns COMMON to the batch and propose a small set of edits to the skill.",
  "",
  "How to work:",
  "1. Read every trajectory of the minibatch.",
  "2. Find the failure patterns that are most frequent and systematic.",
  "3. Give each pattern a failure type.",
  "4. Propose edits that address the common patterns, not single edge cases.",
  "5. Keep edits general: never hard-code values specific to one task.",
  "6. Fill only gaps in the skill; do not repeat what it already says.",
];

const SUCCESS_RULES = [
  "You analyse successes of an AI agent. You get the successful trajectories of one minibatch and the skill document the agent used.",
  "Find behaviour patterns COMMON to the batch that generalise and are worth writing into the skill.",
  "",
  "How to work:",
  "- Propose edits only for patterns the skill does not cover yet.",
  "- Prefer patterns seen in several trajectories; keep them general beyond single tasks.",
  "- Be concise, and strengthen existing sections rather than adding new top-level ones.",
];

const FORMAT = [
  "",
  "You are given a budget L: produce AT MOST L edits, the ones with the most impact (fewer if that is warranted).",
  "",
  "Reply with one JSON object only (no markdown fence, no other text):",
  '{"batch_size": <trajectories analysed>, "failure_summary" or "success_patterns": [...],',
  ' "patch": {"reasoning": "<why these edits>", "edits": [',
  '   {"op": "append", "content": "<markdown added at the end of the skill>"},',
  '   {"op": "insert_after", "target": "<exact text of the skill>", "content": "<markdown>"},',
  '   {"op": "replace", "target": "<exact text of the skill>", "content": "<its replacement>"},',
  '   {"op": "delete", "target": "<exact text to remove>"}]}}',
  '"edits" may be an empty list when no change is warranted.',
  "",
  "The skill may hold sections between <!-- SLOW_UPDATE_START --> and <!-- SLOW_UPDATE_END --> (or APPENDIX markers):",
  "they are protected; never propose an edit that targets text inside them.",
];

export function analystMessages(x: AnalystInput): ChatMessage[] {
  const system = [`hone-role: skillopt-analyst`, ...(x.failed ? ERROR_RULES : SUCCESS_RULES), ...FORMAT].join("\n");
  const parts = [
    `## Current Skill\n${fence(`skill_body.${x.skillName}`, x.skill)}`,
    `## Edit Budget\nProduce at most L=${x.budget} edits.`,
  ];
  if (x.buffer) parts.push(`## Previous Steps in This Epoch\n${x.buffer}`);
  const label = x.failed ? "Failed" : "Successful";
  parts.push(`## ${label} Trajectories (${x.trajectories.length} total)\n${x.trajectories.join("\n\n")}`);
  return [
    { role: "system", content: system },
    { role: "user", content: parts.join("\n\n") },
  ];
}

const MAX_EDITS = 32;
const MAX_TEXT = 8000;
const OPS = new Set(["append", "insert_after", "replace", "delete"]);

function asEdit(v: unknown): SkillEdit | undefined {
  if (!v || typeof v !== "object" || Array.isArray(v)) return undefined;
  const e = v as Record<string, unknown>;
  if (typeof e.op !== "string" || !OPS.has(e.op)) return undefined;
  const text = (x: unknown) => (typeof x === "string" ? x.slice(0, MAX_TEXT) : undefined);
  return { op: e.op, target: text(e.target), content: text(e.content) };
}

/**
 * The edits of an analyst's reply: `patch.edits` of its JSON object (malformed entries dropped, at most 32, texts
 * capped), else — for a model that rewrote the document in its ```component skill_body.<name>``` block — the line
 * diff of that rewrite as edits (skill-edits.ts), bottom first so each target is found where it was. `source` says
 * which.
 */
export function readEdits(reply: string, skillName: string, before: string): { edits: SkillEdit[]; source: string } {
  const json = extractJson(reply) as { patch?: { edits?: unknown } } | undefined;
  const list = json && typeof json === "object" ? json.patch?.edits : undefined;
  if (Array.isArray(list))
    return {
      edits: list
        .slice(0, MAX_EDITS)
        .map(asEdit)
        .filter((e): e is SkillEdit => e !== undefined),
      source: "patch",
    };
  const rewrite = componentBlock(reply, `skill_body.${skillName}`);
  if (rewrite !== undefined) return { edits: editsBetween(before, rewrite).reverse().slice(0, MAX_EDITS), source: "rewrite" };
  return { edits: [], source: "none" };
}
