import type * as z from "zod";
import { packageIssues } from "../issues.ts";
import { type BuiltinMiddlewareName, builtinMiddlewareParams } from "../middleware-params.ts";
import { llmConfigSchema } from "../schema.ts";
import { parseStrictYaml, yamlProblem } from "../yaml-cache.ts";
import {
  ADVISORY_MIDDLEWARES,
  API_TYPE,
  EXTRA_BODY_KEYS,
  INERT_KEYS,
  LLM_KEYS,
  MAPPED_KEYS,
  MAPPED_MIDDLEWARES,
  type MappedMiddleware,
  PLACEHOLDER_KEYS,
  REFUSED_KEYS,
} from "./nexau-layout.ts";
import { addedTool, type MappedSkill, type MappedTool, mapSkills, mapTools } from "./nexau-tools.ts";
import { isRecord, type PackageReader } from "./package-reader.ts";

export type { MappedSkill, MappedTool, ToolKind } from "./nexau-tools.ts";

// A NexAU agent.yaml read section by section onto hone's harness fields. Every function reports every problem it
// finds to the reader (file, field, what to do) and returns what it could map; import writes the result as a hone
// package, and export maps the imported original again to see which sections a learned harness has changed.

const AGENT = "agent.yaml";

export interface MappedMiddlewareUse {
  hone: BuiltinMiddlewareName;
  /** hone's parameters, defaults filled in (what the loaded harness holds). */
  params: Record<string, unknown>;
  index: number;
}

export interface MappedAgent {
  name: string;
  description?: string;
  prompt: { text: string; rel?: string };
  maxIterations: number;
  timeout: number;
  llm: Record<string, unknown>;
  tools: MappedTool[];
  skills: MappedSkill[];
  middlewares: MappedMiddlewareUse[];
  stopTools: string[];
}

/** Reads agent.yaml of the package at `r.dir` onto hone's fields; undefined when agent.yaml cannot be read at all. */
export function mapAgent(r: PackageReader, raw: unknown = readAgentYaml(r)): MappedAgent | undefined {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) {
    r.problem(AGENT, undefined, "must be a YAML mapping (type: agent, name, system_prompt, tools, …)");
    return undefined;
  }
  checkKeys(raw, r);
  const tools = mapTools(raw.tools, r);
  const skills = mapSkills(raw.skills, r);
  if (skills.length > 0 && !tools.some((t) => t.hone === "load_skill")) {
    tools.push(addedTool("load_skill"));
    r.note("load_skill is added: NexAU gives every agent with skills its LoadSkill tool");
  }
  if (!tools.some((t) => t.hone === "view_program")) {
    tools.unshift(addedTool("view_program"));
    r.note("view_program is added: HarnessTTT shows the program in its first message, hone through view_program");
  }
  return {
    name: honeName(raw.name, r),
    description: mapDescription(raw.description, r),
    prompt: mapPrompt(raw, r),
    maxIterations: intIn(raw.max_iterations, 100, 1, 1000, "max_iterations", r),
    timeout: intIn(raw.timeout, 300, 1, 86_400, "timeout", r),
    llm: mapLlm(raw.llm_config, r),
    tools,
    skills,
    middlewares: mapMiddlewares(raw.middlewares, r),
    stopTools: mapStopTools(raw.stop_tools, tools, r),
  };
}

/** A value NexAU reads from the environment when it loads the file: `${env.NAME}` anywhere in it. */
const ENV_REF = /\$\{env\.[A-Za-z_][A-Za-z0-9_]*\}/;
const FLAG_OF: Record<string, string> = { model: "--model", base_url: "--base-url" };
const THIS_FILE_DIR = "$" + "{this_file_dir}";
const VARIABLE_REF = /\$\{variables\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}/g;

/** How long agent.yaml may grow once its variables are put in: a long value named many times would be a memory bomb. */
const MAX_RESOLVED_CHARS = 4 * 1024 * 1024;

/** A scalar as Python's str() writes it, which is what NexAU puts in the text for ${variables.x}. */
const pyStr = (v: unknown) => (v === null ? "None" : v === true ? "True" : v === false ? "False" : String(v));

/**
 * agent.yaml as NexAU reads it (nexau/archs/main_sub/utils/common.py, load_yaml_text_with_vars): `${this_file_dir}` is
 * the package's folder (here ".", so paths stay inside the package), and where the file has a `variables` mapping,
 * every `${variables.a.b}` in its text is that variable's value (a scalar) and the file is read again (`variables`
 * stays, read by no one, so an export that changes nothing writes it back). `${env.NAME}` is left for the fields that
 * read it (llm_config). Undefined, with the problems, where agent.yaml cannot be read.
 */
export function readAgentYaml(r: PackageReader): unknown {
  const raw = r.yaml(AGENT);
  if (!isRecord(raw)) return raw;
  const text = r.text(AGENT);
  const vars = raw.variables;
  if (text === undefined || (vars === undefined && !text.includes(THIS_FILE_DIR))) return raw;
  if (vars !== undefined && vars !== null && !isRecord(vars)) {
    r.problem(AGENT, "variables", "must be a mapping of names to values (NexAU's rule too)");
    return undefined;
  }
  let bad = false;
  let size = text.length;
  const resolved = text
    .split(THIS_FILE_DIR)
    .join(".")
    .replace(VARIABLE_REF, (ref, path: string) => {
      if (size > MAX_RESOLVED_CHARS) return ref; // refused below: no more work, and no problem per reference
      let v: unknown = vars ?? {};
      for (const part of path.split(".")) v = isRecord(v) && Object.hasOwn(v, part) ? v[part] : undefined;
      if (v === undefined || isRecord(v) || Array.isArray(v)) {
        bad = true;
        r.problem(
          AGENT,
          `variables.${path}`,
          v === undefined
            ? `${ref} names a variable the file's variables mapping does not define; define it or write the value`
            : `${ref} is a mapping or a list; only a scalar can stand in text (NexAU's rule too)`,
        );
        return ref;
      }
      const value = pyStr(v);
      size += value.length - ref.length;
      return value;
    });
  if (size > MAX_RESOLVED_CHARS) {
    r.problem(
      AGENT,
      "variables",
      `with its variables put in, the file would hold more than ${MAX_RESOLVED_CHARS} characters; write long texts once, in a file of their own (system_prompt: a path)`,
    );
    return undefined;
  }
  if (bad) return undefined;
  let value: unknown;
  try {
    value = parseStrictYaml(resolved) ?? {};
  } catch (err) {
    r.problem(AGENT, undefined, `${yamlProblem(err)} (once its variables are put in)`);
    return undefined;
  }
  return value;
}

function checkKeys(raw: Record<string, unknown>, r: PackageReader): void {
  for (const [key, value] of Object.entries(raw)) {
    if (MAPPED_KEYS.includes(key) || key === "variables") continue;
    const inert = INERT_KEYS[key];
    if (inert !== undefined) {
      r.note(`${key} is read but not applied: ${inert}`);
      continue;
    }
    const empty =
      value === null || (Array.isArray(value) && value.length === 0) || (isRecord(value) && !Object.keys(value).length);
    const refused = REFUSED_KEYS[key];
    if (refused !== undefined) {
      if (!empty) r.problem(AGENT, key, refused);
    } else if (key === "tool_call_mode") {
      if (value !== "structured")
        r.problem(AGENT, key, `is ${JSON.stringify(value)}; hone calls tools the structured way only: set it to structured`);
    } else r.problem(AGENT, key, "is not a NexAU agent.yaml field; remove it");
  }
  if (raw.type !== undefined && raw.type !== "agent") r.problem(AGENT, "type", 'must be "agent"');
}

function honeName(name: unknown, r: PackageReader): string {
  const base = typeof name === "string" && name.trim() ? name : (r.dir.split("/").pop() ?? "imported");
  const slug =
    base
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, "-")
      .replace(/^[-_]+/, "")
      .slice(0, 64) || "imported";
  if (slug !== name) r.note(`the harness is named "${slug}" (hone names are lowercase letters, digits, - and _)`);
  return slug;
}

function mapDescription(v: unknown, r: PackageReader): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") r.problem(AGENT, "description", "must be text");
  else if (v.length > 2000) r.problem(AGENT, "description", `is ${v.length} characters; hone keeps at most 2000`);
  else return v.trim();
  return undefined;
}

function intIn(v: unknown, fallback: number, min: number, max: number, field: string, r: PackageReader): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    r.problem(AGENT, field, `must be a whole number from ${min} to ${max}`);
    return fallback;
  }
  return v;
}

function mapPrompt(raw: Record<string, unknown>, r: PackageReader): MappedAgent["prompt"] {
  const type = raw.system_prompt_type ?? "string";
  const prompt = raw.system_prompt;
  if (typeof prompt !== "string" || prompt.trim() === "") {
    r.problem(
      AGENT,
      "system_prompt",
      Array.isArray(prompt)
        ? "is a list of blocks; hone takes one system prompt: join them in one file (system_prompt_type: file)"
        : "is missing or empty; hone needs a system prompt (a file with system_prompt_type: file)",
    );
    return { text: "" };
  }
  if (type === "string") {
    if (/^\.{0,2}\/?[\w./-]+\.(md|txt)$/.test(prompt.trim()))
      r.note(`system_prompt_type is string (NexAU's default), so the prompt is the text "${prompt}" itself, as in NexAU`);
    return { text: prompt };
  }
  if (type !== "file") {
    r.problem(
      AGENT,
      "system_prompt_type",
      `is ${JSON.stringify(type)}; hone reads file or string prompts (render the template first)`,
    );
    return { text: "" };
  }
  const rel = r.relPath(prompt, AGENT, "system_prompt");
  const text = rel === undefined ? undefined : r.text(rel, AGENT, "system_prompt");
  if (rel !== undefined && text !== undefined && text.trim() === "") r.problem(rel, undefined, "the system prompt is empty");
  return { text: text ?? "", rel };
}

function mapLlm(v: unknown, r: PackageReader): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) {
    r.problem(AGENT, "llm_config", "must be a mapping (model, base_url, temperature, …)");
    return {};
  }
  const out: Record<string, unknown> = {};
  const from: Record<string, string> = {};
  for (const [key, value] of Object.entries(v)) {
    const field = `llm_config.${key}`;
    if (typeof value === "string" && ENV_REF.test(value) && key !== "api_key") {
      // NexAU puts the environment's value in when it reads the file (and fails where it is unset); a package's defaults
      // here are the package's own, so the field is left to the run's flags rather than read from this environment.
      r.note(
        key === "api_type"
          ? `llm_config.api_type is ${value}, read from the environment by NexAU; hone speaks ${API_TYPE}`
          : `llm_config.${key} is ${value}, read from the environment by NexAU; hone leaves it out: give ${FLAG_OF[key] ?? "the value in the package"} when you run`,
      );
    } else if (LLM_KEYS.includes(key)) {
      out[key] = value;
      from[key] = field;
    } else if (key === "api_key") {
      if (typeof value === "string" && /^\$\{env\.[A-Za-z_][A-Za-z0-9_]*\}$/.test(value)) out.api_key = value;
      else if (typeof value === "string" && PLACEHOLDER_KEYS.includes(value))
        r.note(`llm_config.api_key "${value}" is a placeholder, not a key: hone reads the key from OPENAI_API_KEY`);
      else r.problem(AGENT, field, `holds a literal key; write $\{env.VARIABLE}: keys are never stored in a package`);
    } else if (key === "api_type") {
      if (value !== API_TYPE) r.problem(AGENT, field, `is ${JSON.stringify(value)}; hone speaks ${API_TYPE} only`);
    } else if (key === "extra_body" && isRecord(value)) {
      for (const [k, x] of Object.entries(value)) {
        if (EXTRA_BODY_KEYS.includes(k) && !(k in out)) {
          out[k] = x;
          from[k] = `${field}.${k}`;
        } else r.problem(AGENT, `${field}.${k}`, "is a request field hone does not send; remove it");
      }
    } else r.problem(AGENT, field, `is a request field hone does not send (it sends ${LLM_KEYS.join(", ")}); remove it`);
  }
  if (typeof out.base_url === "string" && !/^https?:\/\/\S+$/.test(out.base_url)) {
    r.note(`llm_config.base_url "${out.base_url}" is not a URL here; it is dropped (give --base-url when you run)`);
    delete out.base_url;
  }
  const parsed = llmConfigSchema.safeParse(out);
  if (!parsed.success)
    for (const i of packageIssues(parsed.error.issues, out, "a field of llm_config"))
      r.problem(AGENT, from[i.field.split(".")[0] ?? ""] ?? "llm_config", i.message);
  return out;
}

function mapMiddlewares(v: unknown, r: PackageReader): MappedMiddlewareUse[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    r.problem(AGENT, "middlewares", "must be a list of {import: module:Class, params}");
    return [];
  }
  const out: MappedMiddlewareUse[] = [];
  for (const [index, entry] of v.entries()) {
    const field = `middlewares.${index}`;
    const ref = typeof entry === "string" ? { import: entry, params: {} } : isRecord(entry) ? entry : undefined;
    const params = ref?.params ?? {};
    if (!ref || typeof ref.import !== "string") r.problem(AGENT, field, "must be {import: module:Class, params}");
    else if (!isRecord(params)) r.problem(AGENT, `${field}.params`, "must be a mapping of constructor arguments");
    else {
      const mapped = MAPPED_MIDDLEWARES.find((m) => m.imports.includes(ref.import as string));
      const p = mapped ? middlewareParams(mapped, params, field, r) : undefined;
      if (mapped && p) out.push({ hone: mapped.hone, params: p, index });
      else if (!mapped && ADVISORY_MIDDLEWARES[ref.import]) r.note(ADVISORY_MIDDLEWARES[ref.import] as string);
      else if (!mapped) r.problem(AGENT, `${field}.import`, unknownMiddleware(ref.import));
    }
  }
  return out;
}

function unknownMiddleware(ref: string): string {
  const generated = /^middlewares\.([a-z][a-z0-9_]*):GeneratedMiddleware$/.exec(ref);
  if (generated)
    return `is a HarnessTTT generated middleware (a Python before_model hook in middlewares/${generated[1]}.py); hone's generated middleware is JavaScript: port the hook to middlewares/${generated[1]}.js with beforeModel, or remove the entry`;
  const known = MAPPED_MIDDLEWARES.flatMap((m) => m.imports.map((i) => `${i} (hone:${m.hone})`));
  return `"${ref}" is a Python middleware class hone cannot run; hone maps ${known.join(", ")}: remove it or use one of those`;
}

/** NexAU constructor arguments → hone parameters (defaults filled in), validated with hone's ranges. */
export function middlewareParams(
  m: MappedMiddleware,
  given: Record<string, unknown>,
  field: string,
  r: PackageReader,
): Record<string, unknown> | undefined {
  const nexau = { ...m.defaults, ...given };
  const hone: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(nexau)) {
    const to = m.params[k];
    if (to) hone[to] = v;
    else if (m.inert[k]) r.note(`${field}.params.${k} is not applied: ${m.inert[k]}`);
    else r.problem(AGENT, `${field}.params.${k}`, `is not a parameter hone maps (${Object.keys(m.params).join(", ")})`);
  }
  if (m.differs) r.note(m.differs);
  if (m.hone === "long_tool_output") fitHeadTail(hone, field, r);
  const parsed = (builtinMiddlewareParams[m.hone] as z.ZodType<Record<string, unknown>>).safeParse(hone);
  if (parsed.success) return parsed.data;
  const back = Object.fromEntries(Object.entries(m.params).map(([k, v]) => [v, k]));
  for (const i of packageIssues(parsed.error.issues, hone))
    r.problem(AGENT, `${field}.params.${back[i.field] ?? i.field}`, `${i.message} (as hone:${m.hone}'s ${i.field})`);
  return undefined;
}

/** NexAU keeps head + tail characters up to max_output_chars; hone's marker line needs one more. */
function fitHeadTail(p: Record<string, unknown>, field: string, r: PackageReader): void {
  const { max_chars: max, head_chars: head, tail_chars: tail } = p;
  if (typeof max === "number" && typeof head === "number" && typeof tail === "number" && head + tail >= max) {
    p.max_chars = head + tail + 1;
    r.note(
      `${field}: head_chars + tail_chars reach max_output_chars, so hone cuts outputs longer than ${head + tail + 1} characters`,
    );
  }
}

function mapStopTools(v: unknown, tools: MappedTool[], r: PackageReader): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    r.problem(AGENT, "stop_tools", "must be a list of tool names");
    return [];
  }
  const out: string[] = [];
  for (const name of v) {
    const t = tools.find((x) => x.nexau === name);
    if (t) out.push(t.hone);
    else r.note(`stop_tools names "${String(name)}", which is not a tool of this package; it is left out`);
  }
  return out;
}
