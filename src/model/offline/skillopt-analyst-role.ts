import { fencedBlocks } from "../../fence.ts";
import type { ChatRequest } from "../types.ts";
import { registerOfflineRole } from "./policy.ts";
import { gaussian, rng, seedFrom } from "./rng.ts";

/**
 * The offline model as SkillOpt's analyst (`hone-role: skillopt-analyst` in the system message), answering in the
 * shape SkillOpt's analyst prompts ask for (microsoft/SkillOpt skillopt/prompts/analyst_error.md, analyst_success.md:
 * a JSON object whose `patch.edits` lists {op, target, content}). It does not understand the trajectories: the skill
 * document comes as the ```component skill_body.<name>``` block of the last user message, and each edit is a `replace`
 * of one `hone-hint:` line by the same line with its value perturbed (an `append` of a new hint when the document has
 * none), at most L edits where the prompt states `L=<n>`.
 *
 * Registered before method-roles.ts, which claims any `hone-role:` line (and so not importing it).
 */
const HINT_LINE = /^hone-hint:\s*([a-z_]+)\s*=\s*([0-9.]+)\s*$/gm;
const BUDGET = /\bL=(\d{1,3})\b/;
const RANGES: Record<string, [number, number, number]> = {
  step_scale: [0.005, 1.5, 0.08],
  literals_per_edit: [1, 8, 2],
  min_step: [0.0001, 0.05, 0.002],
};
const KEYS = Object.keys(RANGES);

/** `hone-hint: key=value` with the value perturbed log-normally and clamped to the key's sensible range. */
function retuned(key: string, value: number, next: () => number): string {
  const [lo, hi] = RANGES[key] as [number, number, number];
  const v = Math.min(hi, Math.max(lo, value * Math.exp(0.4 * gaussian(next))));
  return `hone-hint: ${key}=${key === "literals_per_edit" ? Math.round(v) : Math.round(v * 10_000) / 10_000}`;
}

function skillOf(user: string): string {
  return fencedBlocks(user, "component skill_body.").find((b) => /^component skill_body\.[a-z0-9-]+$/.test(b.info))?.body ?? "";
}

/** The analyst's reply: up to L hint lines retuned, as SkillOpt edits. */
export function skillAnalystReply(user: string, next: () => number): string {
  const budget = Math.max(1, Math.min(4, Number(BUDGET.exec(user)?.[1] ?? 1)));
  const edits: { op: string; target?: string; content: string }[] = [];
  const seen = new Set<string>();
  for (const m of skillOf(user).matchAll(HINT_LINE)) {
    const [line, key = "", value = ""] = m;
    if (edits.length >= budget || !(key in RANGES) || seen.has(line)) continue;
    seen.add(line);
    if (edits.length > 0 && next() < 0.5) continue;
    const content = retuned(key, Number(value), next);
    if (content !== line.trim()) edits.push({ op: "replace", target: line.trim(), content });
  }
  if (edits.length === 0) {
    const key = KEYS[Math.floor(next() * KEYS.length)] as string;
    edits.push({ op: "append", content: retuned(key, (RANGES[key] as number[])[2] as number, next) });
  }
  return JSON.stringify({
    batch_size: 1,
    failure_summary: [{ failure_type: "search_step_size", count: 1, description: "the search's steps are mis-sized" }],
    patch: { reasoning: "offline analyst: retune the search's step sizes", edits },
  });
}

registerOfflineRole({
  name: "skillopt-analyst",
  claims: (r: ChatRequest) => {
    const system = r.messages.find((m) => m.role === "system")?.content;
    return typeof system === "string" && /hone-role:\s*skillopt-analyst\b/.test(system);
  },
  reply: (r: ChatRequest) => {
    const user = String([...r.messages].reverse().find((m) => m.role === "user")?.content ?? "");
    const next = rng(seedFrom(r.sampling?.seed ?? 0, "skillopt-analyst", user.length, r.messages.length));
    return { content: skillAnalystReply(user, next), tool_calls: [] };
  },
});
