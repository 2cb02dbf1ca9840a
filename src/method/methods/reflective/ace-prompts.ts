import type { ChatMessage } from "../../../model/types.ts";
import type { Playbook } from "../../rules/ace.ts";
import { fence, quoted } from "./fenced.ts";

/**
 * ACE's reflector and curator prompts (ace-agent/ace ba78d34, ace/prompts/reflector.py REFLECTOR_PROMPT_NO_GT and
 * curator.py CURATOR_PROMPT_NO_GT: a discovery task has no ground truth, only the evaluator's feedback), in hone's
 * own words. The playbook travels as a ```component playbook``` block; `hone-role: reflect` and
 * `hone-role: ace-curator` let the offline model answer.
 */

export interface ReflectInput {
  question: string;
  trace: string;
  answer: string;
  feedback: string;
  playbook: string;
}

export function reflectorMessages(x: ReflectInput): ChatMessage[] {
  const user = [
    "You are an expert analyst and teacher. Diagnose where the agent's attempt below went wrong, from its trace and the environment's feedback.",
    "",
    "Instructions:",
    "- Read the agent's trace carefully and find where it went wrong.",
    "- Take the environment feedback into account.",
    "- Name the specific conceptual errors, miscalculations or misapplied strategies.",
    "- Give insights the agent can act on to avoid this mistake next time; go for the root cause, not the surface.",
    "- Say exactly what the agent should have done differently.",
    "- The playbook bullets the agent had are below. Tag each one 'helpful', 'harmful' or 'neutral' for reaching a good result.",
    "",
    "Reply with one JSON object with these fields: reasoning (your analysis), error_identification (what went wrong),",
    "root_cause_analysis (why), correct_approach (what to do instead), key_insight (the principle to remember), and",
    'bullet_tags: a list of {"id": "<bullet id>", "tag": "helpful" | "harmful" | "neutral"}, one per bullet.',
    "",
    "**Question:**",
    x.question,
    "",
    "**The agent's trace:**",
    x.trace,
    "",
    "**The agent's answer:**",
    x.answer,
    "",
    "**Environment feedback:**",
    x.feedback,
    "",
    "**The playbook the agent used:**",
    fence("playbook", x.playbook || "(empty)"),
  ].join("\n");
  return [
    {
      role: "system",
      content: "hone-role: reflect\nYou are ACE's reflector: you diagnose an attempt and tag the playbook's bullets.",
    },
    { role: "user", content: user },
  ];
}

export interface CurateInput {
  question: string;
  reflection: string;
  playbook: string;
  stats: unknown;
  tokenBudget: number;
  step: number;
  sections: readonly string[];
}

export function curatorMessages(x: CurateInput): ChatMessage[] {
  const user = [
    "You are a master curator of knowledge. Decide which new insights from the reflection on a previous attempt should be added to the playbook below.",
    "",
    "Context: the playbook will help an agent with similar attempts. The reflection was written with environment feedback that the agent will not have when it uses the playbook.",
    "",
    "Instructions:",
    "- Read the playbook and the reflection.",
    "- Find only the insights, strategies or mistakes that are new: missing from the playbook.",
    "- Avoid redundancy: if similar advice exists, add only what complements it.",
    "- Do not rewrite the playbook; give only the additions.",
    "- Quality over quantity; each addition short, specific and actionable.",
    "- With nothing new to add, return an empty list of operations.",
    "",
    `Token budget of the playbook: ${x.tokenBudget} tokens. Training progress: step ${x.step}.`,
    "",
    "**Playbook statistics:**",
    JSON.stringify(x.stats, null, 2),
    "",
    "**Recent reflection:**",
    quoted(x.reflection, 6000),
    "",
    "**Current playbook:**",
    fence("playbook", x.playbook || "(empty)"),
    "",
    "**Question context:**",
    x.question,
    "",
    "Reply with one JSON object only (no markdown), with the fields reasoning (a string: your analysis) and operations:",
    'a list of {"type": "ADD", "section": "<section>", "content": "<the new bullet, without an id or counters>"}.',
    `Sections: ${x.sections.join("; ")}.`,
  ].join("\n");
  return [
    { role: "system", content: "hone-role: ace-curator\nYou are ACE's curator: you turn a reflection into playbook additions." },
    { role: "user", content: user },
  ];
}

/** ACE's `get_playbook_stats`. */
export function playbookStats(pb: Playbook) {
  const stats = {
    total_bullets: 0,
    high_performing: 0,
    problematic: 0,
    unused: 0,
    by_section: {} as Record<string, { count: number; helpful: number; harmful: number }>,
  };
  for (const s of pb.sections) {
    for (const b of s.bullets) {
      stats.total_bullets++;
      if (b.helpful > 5 && b.harmful < 2) stats.high_performing++;
      else if (b.harmful >= b.helpful && b.harmful > 0) stats.problematic++;
      else if (b.helpful + b.harmful === 0) stats.unused++;
      const cell = stats.by_section[s.title] ?? { count: 0, helpful: 0, harmful: 0 };
      cell.count++;
      cell.helpful += b.helpful;
      cell.harmful += b.harmful;
      stats.by_section[s.title] = cell;
    }
  }
  return stats;
}
