import { fenced, fencedBlocks } from "../../fence.ts";
import type { ChatRequest } from "../types.ts";
import { registerOfflineRole } from "./policy.ts";
import { gaussian, rng, seedFrom } from "./rng.ts";

/**
 * The offline model in the roles the field's methods give their proposer, recognised by a `hone-role: <role>` line
 * in the system message. It does not understand language: it edits the `hone-hint:` lines the offline executor
 * obeys, deterministically from the request and its seed, in the answer shape each role asks for.
 *
 * Texts to work on come in fenced blocks ```component <name> … ``` (in the last user message); a role answers:
 * - `rewrite` (GEPA's reflective rewrite, SkillOpt's edit, OPRO's instruction, EvoPrompt's mutation): the same
 *   blocks, each with its hint values perturbed (or a hint added where there is none);
 * - `crossover` (EvoPrompt GA / DE): one block named after the first, its lines drawn from both parents;
 * - `reflect` (ACE's reflector): JSON {"insights": [...], "bullet_tags": [{"id", "tag": "helpful"|"harmful"}]} for the
 *   bullets ```component playbook``` holds (ids like [str-00001]);
 * - `curate` (ACE's curator): JSON {"operations": [{"type": "ADD", "section", "content"}]} with one new hint bullet;
 * - `meta-agent` (ADAS, DGM, Meta-Harness): JSON {"files": {"prompt.md": …}, "rationale"} rewriting the prompt's
 *   hints, from the files given as ```component <path>``` blocks.
 */
const ROLE = /hone-role:\s*([a-z-]+)/;
const NUMERIC_HINTS: [string, number, number][] = [
  ["step_scale", 0.005, 1.5],
  ["literals_per_edit", 1, 8],
  ["min_step", 0.0001, 0.05],
];

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

function blocks(text: string): { name: string; body: string }[] {
  return fencedBlocks(text, "component ").map((b) => ({ name: b.info.slice("component ".length).trim(), body: b.body }));
}

/** The body with each numeric hint perturbed log-normally (or one hint added), clamped to its sensible range. */
export function perturbHints(body: string, next: () => number): string {
  let touched = false;
  const out = body.replace(/hone-hint:\s*([a-z_]+)\s*=\s*([0-9.]+)/g, (whole, key: string, value: string) => {
    const spec = NUMERIC_HINTS.find(([k]) => k === key);
    if (!spec) return whole;
    touched = true;
    const [, lo, hi] = spec;
    const v = Math.min(hi, Math.max(lo, Number(value) * Math.exp(0.4 * gaussian(next))));
    return `hone-hint: ${key}=${key === "literals_per_edit" ? Math.round(v) : round4(v)}`;
  });
  if (touched) return out;
  const [key, lo, hi] = NUMERIC_HINTS[Math.floor(next() * NUMERIC_HINTS.length)] as [string, number, number];
  const v = lo + (hi - lo) * next() * 0.2;
  return `${out.trimEnd()}\nhone-hint: ${key}=${key === "literals_per_edit" ? Math.max(1, Math.round(v)) : round4(v)}\n`;
}

const fence = (name: string, body: string) => fenced(`component ${name}`, body);

function reply(role: string, user: string, next: () => number): string {
  const given = blocks(user);
  if (role === "rewrite")
    return (
      given.map((b) => fence(b.name, perturbHints(b.body, next))).join("\n\n") ||
      "```component text\nhone-hint: step_scale=0.05\n```"
    );
  if (role === "crossover") {
    const [a, b] = given;
    if (!a) return "```component child\nhone-hint: step_scale=0.05\n```";
    const la = a.body.split("\n");
    const lb = (b?.body ?? a.body).split("\n");
    const lines = Array.from(
      { length: Math.max(la.length, lb.length) },
      (_, i) => (next() < 0.5 ? la[i] : lb[i]) ?? la[i] ?? lb[i] ?? "",
    );
    return fence(a.name, perturbHints(lines.join("\n"), next));
  }
  if (role === "reflect") {
    const ids = [...(given.find((b) => b.name === "playbook")?.body ?? "").matchAll(/\[([a-z]+-\d{5})\]/g)].map((m) => m[1]);
    return JSON.stringify({
      insights: ["the search moves too little or too much; adjust hone-hint step sizes"],
      bullet_tags: ids.map((id) => ({ id, tag: next() < 0.6 ? "helpful" : "harmful" })),
    });
  }
  if (role === "curate") {
    const body = perturbHints("", next).trim();
    return JSON.stringify({ operations: [{ type: "ADD", section: "strategies", content: body }] });
  }
  if (role === "meta-agent") {
    const prompt = given.find((b) => b.name === "prompt.md")?.body ?? "";
    return JSON.stringify({ files: { "prompt.md": perturbHints(prompt, next) }, rationale: "retune the search's step sizes" });
  }
  return "";
}

registerOfflineRole({
  name: "method-roles",
  claims: (r: ChatRequest) => {
    const system = r.messages.find((m) => m.role === "system")?.content ?? "";
    return typeof system === "string" && ROLE.test(system) && !/hone-role:\s*proposer\b/.test(system);
  },
  reply: (r: ChatRequest) => {
    const system = (r.messages.find((m) => m.role === "system")?.content ?? "") as string;
    const role = ROLE.exec(system)?.[1] ?? "";
    const user = [...r.messages].reverse().find((m) => m.role === "user")?.content ?? "";
    const next = rng(seedFrom(r.sampling?.seed ?? 0, role, String(user).length, r.messages.length));
    return { content: reply(role, String(user), next), tool_calls: [] };
  },
});
