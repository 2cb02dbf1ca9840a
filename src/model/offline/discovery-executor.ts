import type { ChatRequest, ToolCall } from "../types.ts";
import { jsonResult, pastCalls, textOf } from "./conversation.ts";
import { type Hints, parseHints } from "./hints.ts";
import { gaussian, rng, seedFrom } from "./rng.ts";

export const EVOLVE_START = "# EVOLVE-BLOCK-START";
export const EVOLVE_END = "# EVOLVE-BLOCK-END";

/** What the simulated executor decided to do next: one tool call. */
export interface Decision {
  name: string;
  args: Record<string, unknown>;
}

interface Scored {
  block: string;
  score: number;
}

/**
 * A simple local-search agent over the fixed discovery tools: load the listed skills, view the program, evaluate
 * it, then repeatedly replace the EVOLVE block with the best block so far with a few float literals perturbed,
 * evaluate, and keep improvements. Temperature scales the step; hints change step size and edit width.
 */
export function decideDiscoveryStep(request: ChatRequest): Decision {
  const calls = pastCalls(request.messages);
  const hints = parseHints([
    ...textOf(request.messages, ["system", "user"]),
    ...calls.filter((c) => c.name === "load_skill" && !c.failed).map((c) => c.result ?? ""),
  ]);
  const toolNames = new Set((request.tools ?? []).map((t) => t.function.name));

  if (hints.load_skills && toolNames.has("load_skill")) {
    const loaded = new Set(calls.filter((c) => c.name === "load_skill").map((c) => String(c.args.name)));
    const listed = listedSkills(textOf(request.messages, ["system"]).join("\n"));
    const next = listed.find((s) => !loaded.has(s));
    if (next) return { name: "load_skill", args: { name: next } };
  }

  const viewed = [...calls].reverse().find((c) => c.name === "view_program" && !c.failed && c.result);
  const startBlock = viewed?.result ? viewedBlock(viewed.result) : undefined;
  if (startBlock === undefined) return { name: "view_program", args: {} };

  let direction: "maximize" | "minimize" = "maximize";
  let evaluationsLeft = Number.POSITIVE_INFINITY;
  let current = startBlock;
  let best: Scored | undefined = statedStartScore(request, hints, startBlock);
  let lastWasEdit = false;
  let editAttempts = 0;
  const combined = hints.combined_tool && toolNames.has(hints.combined_tool) ? hints.combined_tool : undefined;
  const record = (block: string, text: string | undefined) => {
    const r = jsonResult(text);
    if (!r) return;
    if (r.direction === "minimize") direction = "minimize";
    if (typeof r.evaluations_left === "number") evaluationsLeft = r.evaluations_left;
    if (r.valid === true && typeof r.score === "number") {
      const better = !best || (direction === "maximize" ? r.score > best.score : r.score < best.score);
      if (better) best = { block, score: r.score };
    }
  };
  for (const c of calls) {
    if (combined && c.name === combined) {
      editAttempts++;
      lastWasEdit = false;
      if (!c.failed && typeof c.args.block === "string") record(c.args.block, c.result);
    } else if (c.name === "edit_program") {
      editAttempts++;
      if (!c.failed && typeof c.args.block === "string") {
        current = c.args.block;
        lastWasEdit = true;
      }
    } else if (c.name === "evaluate_program") {
      lastWasEdit = false;
      record(current, c.result);
    }
  }

  if (evaluationsLeft <= 0)
    return { name: "finish", args: { summary: best ? `best score ${best.score}` : "no valid program found" } };
  if (lastWasEdit || !best) return { name: "evaluate_program", args: {} };

  const seed = request.sampling?.seed ?? 0;
  const random = rng(seedFrom(seed, editAttempts, best.block));
  const temperature = request.sampling?.temperature ?? 1;
  return { name: combined ?? "edit_program", args: { block: perturbBlock(best.block, random, temperature, hints) } };
}

/** The starting score, when the task message states it as `starting score: X` and no hint asks to re-measure. */
function statedStartScore(request: ChatRequest, hints: Hints, block: string): Scored | undefined {
  if (hints.evaluate_first) return undefined;
  for (const t of textOf(request.messages, ["user"])) {
    const m = /starting score:\s*(-?[0-9.]+(?:e[-+]?\d+)?)/i.exec(t);
    if (m) {
      const score = Number(m[1]);
      if (Number.isFinite(score)) return { block, score };
    }
  }
  return undefined;
}

export function listedSkills(systemText: string): string[] {
  return [...systemText.matchAll(/^- `([a-z0-9][a-z0-9-]*)`:/gm)].map((m) => m[1] as string);
}

/** The editable text in view_program's answer: the EVOLVE block, or the whole program when it has no markers. */
function viewedBlock(view: string): string | undefined {
  const block = extractBlock(view);
  if (block !== undefined || !view.includes("no EVOLVE-BLOCK markers")) return block;
  const body = view.indexOf("\n\n");
  return body < 0 ? undefined : view.slice(body + 2);
}

export function extractBlock(programText: string): string | undefined {
  const start = programText.indexOf(EVOLVE_START);
  const end = programText.indexOf(EVOLVE_END, start + 1);
  if (start < 0 || end < 0) return undefined;
  const afterStartLine = programText.indexOf("\n", start);
  const endLineStart = programText.lastIndexOf("\n", end) + 1;
  if (afterStartLine < 0 || afterStartLine + 1 > endLineStart) return "";
  return programText.slice(afterStartLine + 1, endLineStart);
}

const FLOAT_LITERAL = /(?<![\w.])(\d+\.\d+(?:[eE][-+]?\d+)?)(?![\w.])/g;

export function perturbBlock(block: string, random: () => number, temperature: number, hints: Hints): string {
  const literals = [...block.matchAll(FLOAT_LITERAL)];
  if (literals.length === 0) return block;
  const chosen = new Set<number>();
  const want = Math.min(hints.literals_per_edit, literals.length);
  while (chosen.size < want) chosen.add(Math.floor(random() * literals.length));
  const scale = hints.step_scale * Math.max(0.05, temperature);
  let out = "";
  let last = 0;
  literals.forEach((m, i) => {
    const index = m.index ?? 0;
    out += block.slice(last, index);
    const text = m[1] as string;
    if (chosen.has(i)) {
      const v = Number(text);
      const step = Math.max(Math.abs(v) * scale, hints.min_step) * gaussian(random);
      out += formatFloat(Math.abs(v + step));
    } else {
      out += text;
    }
    last = index + text.length;
  });
  return out + block.slice(last);
}

function formatFloat(v: number): string {
  const s = String(Number(v.toPrecision(6)));
  return s.includes(".") || s.includes("e") ? s : `${s}.0`;
}

export function toToolCall(decision: Decision, id: string): ToolCall {
  return { id, type: "function", function: { name: decision.name, arguments: JSON.stringify(decision.args) } };
}
