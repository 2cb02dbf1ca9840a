/**
 * What the prompt optimizers (OPRO, EvoPrompt GA and DE) share: the one text component of the harness they
 * optimize (`system_prompt` or `skill_body.<skill>`), reading its current text, writing it as a spec, and the
 * fenced ```component <name>``` blocks their proposer prompts and answers carry.
 */

import { parse as parseYaml } from "yaml";
import * as z from "zod";
import { SKILL_NAME } from "../../harness/schema.ts";
import { type HarnessSpec, SPEC_LIMITS, validateSpec } from "../../harness/spec.ts";
import { yamlNestedPast } from "../../yaml-depth.ts";
import type { Archive, Candidate } from "../method.ts";
import { oriented } from "../rules/sample.ts";

/** `system_prompt` or `skill_body.<skill name>`. */
export const componentParam = z
  .string()
  .refine(
    (s) => s === "system_prompt" || (s.startsWith("skill_body.") && SKILL_NAME.test(s.slice("skill_body.".length))),
    "a component is system_prompt or skill_body.<skill name>",
  )
  .default("system_prompt");

/** What the component is called in a proposer prompt. */
export function componentLabel(component: string): string {
  return component === "system_prompt" ? "system prompt" : `body of the skill "${component.slice("skill_body.".length)}"`;
}

/** The spec limit of the component's text. */
export function componentLimit(component: string): number {
  return component === "system_prompt" ? SPEC_LIMITS.systemPrompt : SPEC_LIMITS.skillBody;
}

/** The component's current text in a harness's files (undefined when the harness lacks it). */
export function componentFromFiles(files: Record<string, string>, component: string): string | undefined {
  if (component === "system_prompt") {
    let agent: Record<string, unknown>;
    const text = files["agent.yaml"] ?? "";
    // Nested past 64 levels: never a harness's, and composing it would exhaust the stack.
    if (yamlNestedPast(text, 64) !== undefined) return undefined;
    try {
      agent = (parseYaml(text) ?? {}) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    const ref = agent.system_prompt;
    if (typeof ref !== "string") return files["prompt.md"]?.trim();
    return ((agent.system_prompt_type ?? "file") === "file" ? files[ref] : ref)?.trim();
  }
  const skill = files[`skills/${component.slice("skill_body.".length)}/SKILL.md`];
  const m = skill === undefined ? null : /^---\r?\n[\s\S]*?\r?\n---\r?\n?([\s\S]*)$/.exec(skill);
  return m ? (m[1] ?? "").trim() : undefined;
}

/** The component's text as a candidate's own spec set it (undefined when its spec did not touch it). */
export function componentFromSpec(c: Candidate, component: string): string | undefined {
  if (c.change?.kind !== "spec") return undefined;
  const spec = c.change.spec;
  const text = component === "system_prompt" ? spec.system_prompt : spec.skill_body?.[component.slice("skill_body.".length)];
  return text?.trim();
}

/** The component's text of a candidate: from its spec where it set it, else read from its files. */
export function componentText(
  c: Candidate,
  component: string,
  files: (id: string) => Record<string, string>,
): string | undefined {
  return componentFromSpec(c, component) ?? componentFromFiles(files(c.id), component);
}

/** A spec setting the component to `text`, or the schema's problems with it. */
export function componentSpec(component: string, text: string): { spec?: HarnessSpec; problems: string[] } {
  const raw =
    component === "system_prompt" ? { system_prompt: text } : { skill_body: { [component.slice("skill_body.".length)]: text } };
  const r = validateSpec(raw);
  return { spec: r.spec, problems: r.problems.map((p) => `${p.field}: ${p.message}`) };
}

export const fence = (name: string, body: string): string => `\`\`\`component ${name}\n${body.trim()}\n\`\`\``;

/** Replies longer than this are read only up to it (an answer is one component of at most 12,000 characters). */
export const MAX_REPLY = 256 * 1024;
const OPEN = "```component ";
/** How a component block opens: a new text still holding it is malformed (OPRO drops it, as upstream drops "INS"). */
export const COMPONENT_OPEN = OPEN;

/**
 * The ```component <name>``` blocks of a reply, in order. Linear time: each block runs from its opening line to the
 * last line that is exactly ``` before the next opening (so fences inside a component survive); an opening with no
 * closing line is not a block.
 */
export function componentBlocks(reply: string): { name: string; body: string }[] {
  const text = reply.slice(0, MAX_REPLY);
  const opens: number[] = [];
  for (let i = text.indexOf(OPEN); i !== -1; i = text.indexOf(OPEN, i + OPEN.length)) opens.push(i);
  const out: { name: string; body: string }[] = [];
  for (const [k, at] of opens.entries()) {
    const eol = text.indexOf("\n", at);
    const end = opens[k + 1] ?? text.length;
    if (eol === -1 || eol >= end) continue;
    const name = text.slice(at + OPEN.length, eol).trim();
    if (!name || name.includes("`")) continue;
    const close = lastBareFence(text, eol, end);
    if (close !== -1) out.push({ name, body: text.slice(eol + 1, close) });
  }
  return out;
}

/** The start of the last line in (from, to) that is exactly ``` (trailing spaces allowed), or -1. */
function lastBareFence(text: string, from: number, to: number): number {
  for (let i = text.lastIndexOf("\n```", to - 4); i >= from; i = text.lastIndexOf("\n```", i - 1)) {
    let j = i + 4;
    while (j < to && (text[j] === " " || text[j] === "\t" || text[j] === "\r")) j++;
    if (j >= to || text[j] === "\n") return i + 1;
    if (i === 0) break;
  }
  return -1;
}

/**
 * The text after the last opening line of a block that was never closed (a reply cut short), or undefined when the
 * reply opens none: as OPRO's extraction takes everything after <INS> when </INS> is missing and EvoPrompt's
 * `get_final_prompt` everything after the last <prompt>.
 */
function unclosedBody(text: string): string | undefined {
  for (let at = text.lastIndexOf(OPEN); at !== -1; at = at === 0 ? -1 : text.lastIndexOf(OPEN, at - 1)) {
    // The name runs to the end of the line; a backtick ends the scan (so it never runs past the next opening: linear).
    let end = at + OPEN.length;
    while (end < text.length && text[end] !== "\n" && text[end] !== "`") end++;
    if (text[end] === "`" || !text.slice(at + OPEN.length, end).trim()) continue;
    return end < text.length ? text.slice(end + 1) : "";
  }
  return undefined;
}

/**
 * The new text in a reply: the last block named after the component, else the last block of any name, else the text
 * after an opening that was never closed, else the whole reply (as OPRO's tag extraction and EvoPrompt's
 * `get_final_prompt` fall back to the whole output).
 */
export function replyText(reply: string, component: string): string {
  const text = reply.slice(0, MAX_REPLY);
  const blocks = componentBlocks(text);
  const own = blocks.filter((b) => b.name === component);
  const pick = own[own.length - 1] ?? blocks[blocks.length - 1];
  return (pick ? pick.body : (unclosedBody(text) ?? text)).trim();
}

/** A measured candidate's score made higher-is-better (the field's rules maximise), or undefined. */
export function orientedScore(archive: Archive, c: Candidate): number | undefined {
  const s = c.measured?.score;
  return c.status === "measured" && typeof s === "number" && Number.isFinite(s) ? oriented(s, archive.direction) : undefined;
}
