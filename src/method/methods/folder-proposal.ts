// What the folder-writing methods (dgm, adas, meta-harness) share: asking the proposer, reading its JSON answer
// without trusting it, and writing a harness folder from a base candidate plus the files the answer changes.
import { cpSync, existsSync, lstatSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isHarnessFolder } from "../../harness/program.ts";
import { ModelError } from "../../model/errors.ts";
import type { ChatMessage } from "../../model/types.ts";
import type { Candidate, ProposeContext } from "../method.ts";

/** The most an answer may change: files, bytes per file and in all, folder depth; and the longest answer read. */
export const ANSWER_LIMITS = { files: 40, fileBytes: 64 << 10, totalBytes: 512 << 10, depth: 6, replyChars: 1 << 20 };
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;
const FIELD_CHARS = 8000;

/** The proposer's answer, or why there is none (a failed call, or a reply that is not what was asked). */
export type Reply = { text: string } | { error: string };

/**
 * One proposer call. A failed call is an answer too (the methods treat it as their code does: a lost generation, a
 * retried diagnosis); a request missing from a replay's records is not, and stops the run.
 */
export async function ask(
  ctx: Pick<ProposeContext<unknown>, "proposer">,
  messages: ChatMessage[],
  sample: number,
  temperature?: number,
): Promise<Reply> {
  try {
    const r = await ctx.proposer.complete(messages, { sample, ...(temperature === undefined ? {} : { temperature }) });
    return { text: r.text };
  } catch (err) {
    if (err instanceof ModelError && err.kind === "replay_miss") throw err;
    return { error: `the proposer call failed: ${(err as Error).message}` };
  }
}

/**
 * The bodies of a reply's ```json blocks, read by lines as DGM's `extract_json_between_markers` reads them: a block opens
 * on a line starting with ```json and closes at the next line starting with ```, so backticks inside a JSON string (a
 * prompt file's own code fences, on the same line as the JSON escapes them) never end it. An unclosed block runs on.
 */
function jsonFences(text: string): string[] {
  const blocks: string[] = [];
  let open: string[] | undefined;
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (open === undefined) {
      // JSON begun on the opening line itself ("```json {") is kept; an info string such as "jsonc" is not.
      if (t.startsWith("```json")) open = /^\s*[{[]/.test(t.slice(7)) ? [t.slice(7)] : [];
    } else if (t.startsWith("```")) {
      blocks.push(open.join("\n"));
      open = undefined;
    } else open.push(line);
  }
  if (open !== undefined) blocks.push(open.join("\n"));
  return blocks;
}

/** A parsed object, or why the text is not one. */
function parseObject(body: string): Record<string, unknown> | string {
  try {
    const v: unknown = JSON.parse(body);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : "the answer's JSON is not an object";
  } catch (err) {
    return `the answer's JSON does not parse: ${(err as Error).message}`;
  }
}

/**
 * The JSON object of a reply: the whole reply when it is one (ADAS asks for bare JSON), else its first ```json block
 * that parses, else the text from its first `{` to its last `}`. Linear and bounded; the problem reported is the
 * first block's (or the span's) when none parses.
 */
export function jsonObject(text: string): Record<string, unknown> | string {
  if (text.length > ANSWER_LIMITS.replyChars) return `the answer is longer than ${ANSWER_LIMITS.replyChars} characters`;
  const bodies = [text.trim(), ...jsonFences(text)];
  const a = text.indexOf("{");
  const b = text.lastIndexOf("}");
  if (a >= 0 && b > a) bodies.push(text.slice(a, b + 1));
  let problem: string | undefined;
  for (const [i, body] of bodies.entries()) {
    const o = parseObject(body);
    if (typeof o !== "string") return o;
    if (i > 0) problem ??= o;
  }
  return problem ?? "the answer holds no JSON object";
}

/** A text field of an answer, bounded; "" when absent or not text. */
export const field = (o: Record<string, unknown>, key: string): string =>
  typeof o[key] === "string" ? (o[key] as string).slice(0, FIELD_CHARS) : "";

/** Whether a path may name a file of a harness folder: relative, plain segments, no `.`/`..`, not too deep. */
export function validPath(p: string): boolean {
  if (p.length === 0 || p.length > 300) return false;
  const parts = p.split("/");
  return parts.length <= ANSWER_LIMITS.depth && parts.every((s) => SEGMENT.test(s) && s !== "." && s !== "..");
}

/** The `files` of an answer ({path: text, or null to delete}), checked against ANSWER_LIMITS; or what is wrong. */
export function fileChanges(raw: unknown): Record<string, string | null> | string {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return '"files" must be an object of path → text';
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length === 0) return '"files" changes nothing';
  if (entries.length > ANSWER_LIMITS.files) return `"files" changes more than ${ANSWER_LIMITS.files} files`;
  let total = 0;
  const out: Record<string, string | null> = {};
  for (const [path, text] of entries) {
    if (!validPath(path)) return `"files": ${JSON.stringify(path.slice(0, 80))} is not a relative path of plain names`;
    if (text !== null && typeof text !== "string") return `"files"."${path}" must be text or null`;
    const size = text === null ? 0 : Buffer.byteLength(text);
    if (size > ANSWER_LIMITS.fileBytes) return `"files"."${path}" is larger than ${ANSWER_LIMITS.fileBytes} bytes`;
    total += size;
    out[path] = text;
  }
  if (total > ANSWER_LIMITS.totalBytes) return `"files" holds more than ${ANSWER_LIMITS.totalBytes} bytes`;
  return out;
}

/** A design answer: the files it changes and its text fields; or why it is not one. */
export function readAnswer(text: string): { files: Record<string, string | null>; o: Record<string, unknown> } | string {
  const o = jsonObject(text);
  if (typeof o === "string") return o;
  const files = fileChanges(o.files);
  return typeof files === "string" ? files : { files, o };
}

/**
 * Writes `dest` as a copy of `baseDir` with `files` applied (null deletes). Returns the problem when a path runs
 * through a file or a link; the folder is then removed, so nothing half-written is proposed.
 */
export function writeFolder(dest: string, baseDir: string, files: Record<string, string | null>): string | undefined {
  rmSync(dest, { recursive: true, force: true });
  cpSync(baseDir, dest, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    const target = join(dest, path);
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const d = join(dest, ...parts.slice(0, i));
      if (existsSync(d) && !lstatSync(d).isDirectory()) {
        rmSync(dest, { recursive: true, force: true });
        return `"files"."${path}": ${parts.slice(0, i).join("/")} is a file, not a folder`;
      }
    }
    if (existsSync(target) && !lstatSync(target).isFile()) {
      rmSync(dest, { recursive: true, force: true });
      return `"files"."${path}" names a folder`;
    }
    if (text === null) rmSync(target, { force: true });
    else {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
  }
  return undefined;
}

/** A candidate's harness folder on disk (materialised through ctx.files), or undefined when it has none. */
export function candidateDir(ctx: Pick<ProposeContext<unknown>, "files">, c: Candidate): string | undefined {
  if (!c.commit) return undefined;
  ctx.files(c.id);
  return isHarnessFolder(c.dir) ? c.dir : undefined;
}

/** A text as the fenced block the methods' prompts use (and the offline model's roles read). */
export const fence = (name: string, body: string): string =>
  `\`\`\`component ${name}\n${body.endsWith("\n") ? body : `${body}\n`}\`\`\``;

/** Every file of a harness as fenced blocks, sorted by path, within `cap` characters (the rest named, not shown). */
export function harnessBlocks(files: Readonly<Record<string, string>>, cap = 48_000): string {
  const out: string[] = [];
  const left: string[] = [];
  let used = 0;
  for (const path of Object.keys(files).sort()) {
    const block = fence(path, files[path] as string);
    if (used + block.length > cap) left.push(path);
    else {
      out.push(block);
      used += block.length;
    }
  }
  if (left.length) out.push(`(not shown, over the prompt's size: ${left.join(", ")})`);
  return out.join("\n\n");
}

/** The files of `files` that differ from `base` (null for one `base` has and `files` lacks). */
export function changedFiles(
  base: Readonly<Record<string, string>>,
  files: Readonly<Record<string, string>>,
): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [p, t] of Object.entries(files)) if (base[p] !== t) out[p] = t;
  for (const p of Object.keys(base)) if (!(p in files)) out[p] = null;
  return out;
}

/** What a harness package is, for the methods' prompts (DGM's "coding agent summary", for hone's harness). */
export const HARNESS_FORMAT = `# The agent's harness (what you may change)
The agent is a frozen language model driven by a harness package: a folder of plain files.
- \`agent.yaml\`: name, \`system_prompt: prompt.md\`, \`max_iterations\`, \`llm_config\` (temperature, top_p, max_tokens), the
  tools (each \`tools/<name>.tool.yaml\`), skills (\`skills/<name>\`), middlewares (\`import: hone:<name>\` with params).
- \`prompt.md\`: the system prompt.
- \`skills/<name>/SKILL.md\`: front matter (name, description) and a body the agent loads on demand with \`load_skill\`.
- \`tools/<name>.tool.yaml\`: a tool's name, description and JSON Schema; custom tools are \`custom_tools/<name>.js\`.
The tools \`view_program\`, \`edit_program\`, \`evaluate_program\` and \`finish\` must stay. Every folder is checked before it
runs (schema, static gate of generated code, self-test); one that fails the check is refused and never measured.
Lines of the form \`hone-hint: key=value\` in the prompt or a skill tune how hone's offline model searches.`;
