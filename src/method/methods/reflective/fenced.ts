/**
 * Text in and out of a reflective method's prompts. Component texts travel in fenced blocks
 * ```component <name> … ``` (the offline model's method roles work on those); untrusted text put in a prompt
 * (trajectories, evaluator feedback) has its fences neutralised, so it cannot open a block of its own; replies are
 * read in linear time with a size cap.
 */

import { fenced, fencedBlocks } from "../../../fence.ts";

export const MAX_REPLY = 256 << 10;

/** A component's text as a fenced block, its fence longer than any run of backticks in the text (src/fence.ts). */
export const fence = (name: string, body: string): string => fenced(`component ${name}`, body);

/** Untrusted text for a prompt: runs of backticks broken up, capped to `max` characters. */
export function quoted(text: string, max: number): string {
  const t = text.replace(/`{3,}/g, (m) => "'".repeat(m.length));
  return t.length > max ? `${t.slice(0, max)}… [${t.length - max} more characters]` : t;
}

/**
 * The body of the first ```component <name> block of a reply, or undefined: closed as CommonMark closes a fence, so a
 * text holding its own code examples comes back whole (src/fence.ts).
 */
export function componentBlock(reply: string, name: string): string | undefined {
  const info = `component ${name}`;
  return fencedBlocks(reply.slice(0, MAX_REPLY), info)
    .find((b) => b.info === info)
    ?.body.trim();
}

/**
 * GEPA's `output_extractor` for a reply without the named block: the text between the first and the last ```
 * (without a language tag on the opening line); an unclosed block loses its opening fence; no fence at all gives the
 * whole reply, trimmed.
 */
export function fencedText(reply: string): string {
  const text = reply.slice(0, MAX_REPLY);
  const start = text.indexOf("```") + 3;
  const end = text.lastIndexOf("```");
  if (start >= end) {
    const s = text.trim();
    if (s.startsWith("```")) return s.replace(/^```\S*\n?/, "").trim();
    if (s.endsWith("```")) return s.slice(0, -3).trim();
    return s;
  }
  return text
    .slice(start, end)
    .replace(/^\S*\n/, "")
    .trim();
}

/** A component's new text from a reply: its named block, else GEPA's extraction. */
export const replyText = (reply: string, name: string): string => componentBlock(reply, name) ?? fencedText(reply);

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The top-level balanced {...} spans of a text, in one pass (strings and escapes respected). */
function objectSpans(text: string, limit = 16): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length && spans.length < limit; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"' && depth > 0) inString = true;
    else if (ch === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === "}" && depth > 0) {
      depth--;
      if (depth === 0) spans.push(text.slice(start, i + 1));
    }
  }
  return spans;
}

/**
 * A JSON object from a model's reply, as ACE's `extract_json_from_text` finds one: the whole reply, else a ```json
 * block, else the first balanced {...} that parses. Undefined when there is none.
 */
export function extractJson(reply: string): unknown {
  const text = reply.slice(0, MAX_REPLY);
  const whole = tryJson(text.trim());
  if (whole !== undefined) return whole;
  for (const m of text.matchAll(/```json[ \t]*\n?([^`]*)```/gi)) {
    const v = tryJson((m[1] ?? "").trim());
    if (v !== undefined) return v;
  }
  for (const span of objectSpans(text)) {
    const v = tryJson(span);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** The `"bullet_tags"` list of a reflector's reply, as ACE's reflector reads it (the bracketed list after the key). */
export function bulletTags(reply: string): unknown[] {
  const text = reply.slice(0, MAX_REPLY);
  const key = text.indexOf('"bullet_tags"');
  if (key === -1) return [];
  const open = text.indexOf("[", key);
  if (open === -1) return [];
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "[") depth++;
    else if (text[i] === "]" && --depth === 0) {
      const v = tryJson(text.slice(open, i + 1));
      return Array.isArray(v) ? v : [];
    }
  }
  return [];
}
