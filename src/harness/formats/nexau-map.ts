import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { zodIssues } from "../../errors.ts";
import { type BuiltinMiddlewareName, builtinMiddlewareParams } from "../middleware-params.ts";
import { llmConfigSchema, SKILL_NAME, skillFrontmatterSchema, TOOL_NAME } from "../schema.ts";
import {
  ADDED_TOOLS,
  ADVISORY_MIDDLEWARES,
  API_TYPE,
  CUSTOM_TOOL_BINDING,
  EXTRA_BODY_KEYS,
  FIXED_TOOLS,
  fixedBinding,
  INERT_KEYS,
  LLM_KEYS,
  MAPPED_KEYS,
  MAPPED_MIDDLEWARES,
  type MappedMiddleware,
  PLACEHOLDER_KEYS,
  PY_PATH_ARG,
  PY_PATH_ARGS,
  REFUSED_KEYS,
} from "./nexau-layout.ts";
import { isRecord, type PackageReader } from "./package-reader.ts";

// A NexAU agent.yaml read section by section onto hone's harness fields. Every function reports every problem it
// finds to the reader (file, field, what to do) and returns what it could map; import writes the result as a hone
// package, and export maps the imported original again to see which sections a learned harness has changed.

const AGENT = "agent.yaml";

export type ToolKind = "fixed" | "probe" | "python" | "added";

export interface MappedTool {
  hone: string;
  /** The name in the NexAU package (as the model saw it there); undefined for tools hone adds. */
  nexau?: string;
  kind: ToolKind;
  /** The hone tool file's value: type, name, description, input_schema. */
  yaml: Record<string, unknown>;
  /** The Python source of a generated tool, and where the NexAU package keeps it. */
  python?: { rel: string; bytes: Buffer };
  /** The agent.yaml entry and tool file it came from. */
  entry?: Record<string, unknown>;
  yamlRel?: string;
}

export interface MappedSkill {
  name: string;
  /** The path agent.yaml lists (./skills/<folder>) and the SKILL.md file's package path. */
  listed: string;
  rel: string;
  text: string;
}

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
export function mapAgent(r: PackageReader): MappedAgent | undefined {
  const raw = r.yaml(AGENT);
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

function checkKeys(raw: Record<string, unknown>, r: PackageReader): void {
  for (const [key, value] of Object.entries(raw)) {
    if (MAPPED_KEYS.includes(key)) continue;
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
    if (LLM_KEYS.includes(key)) {
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
    for (const i of zodIssues(parsed.error.issues))
      r.problem(AGENT, from[i.field.split(".")[0] ?? ""] ?? "llm_config", i.message);
  return out;
}

function addedTool(name: keyof typeof ADDED_TOOLS): MappedTool {
  return { hone: name, kind: "added", yaml: structuredClone(ADDED_TOOLS[name]) as unknown as Record<string, unknown> };
}

const ENTRY_KEYS = [
  "name",
  "yaml_path",
  "binding",
  "lazy",
  "as_skill",
  "defer_loading",
  "extra_kwargs",
  "source_id",
  "permissions",
];
const TOOL_FILE_KEYS = ["type", "name", "description", "input_schema"];

function mapTools(v: unknown, r: PackageReader): MappedTool[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    r.problem(AGENT, "tools", "must be a list of {name, yaml_path, binding}");
    return [];
  }
  const out: MappedTool[] = [];
  v.forEach((entry, i) => {
    const t = mapTool(entry, `tools.${i}`, r);
    if (!t) return;
    if (out.some((o) => o.hone === t.hone)) r.problem(AGENT, `tools.${i}.name`, `"${t.nexau}" is listed twice`);
    else out.push(t);
  });
  return out;
}

function mapTool(entry: unknown, field: string, r: PackageReader): MappedTool | undefined {
  if (!isRecord(entry) || typeof entry.name !== "string" || typeof entry.yaml_path !== "string") {
    r.problem(AGENT, field, "must be {name, yaml_path, binding}");
    return undefined;
  }
  for (const k of Object.keys(entry)) if (!ENTRY_KEYS.includes(k)) r.problem(AGENT, `${field}.${k}`, "is not a NexAU tool field");
  for (const k of ["as_skill", "defer_loading"])
    if (entry[k] === true)
      r.problem(AGENT, `${field}.${k}`, "changes how the model is offered the tool; hone offers every tool up front: remove it");
  if (entry.permissions !== undefined) r.note(`${field}.permissions is not applied: hone's tools reach only the task`);
  const kind = bindingKind(entry, field, r);
  const yamlRel = r.relPath(entry.yaml_path, AGENT, `${field}.yaml_path`);
  const file = yamlRel === undefined ? undefined : r.yaml(yamlRel, AGENT, `${field}.yaml_path`);
  if (!kind || yamlRel === undefined || file === undefined) return undefined;
  const yaml = toolFile(file, entry.name, yamlRel, r);
  if (!yaml) return undefined;
  const hone = kind.kind === "fixed" ? kind.hone : entry.name;
  if (kind.kind === "python") {
    if (!TOOL_NAME.test(entry.name))
      r.problem(AGENT, `${field}.name`, "tool names are 3-32 characters: a lowercase letter, then letters, digits or _");
    const props = isRecord(yaml.input_schema.properties) ? { ...yaml.input_schema.properties } : {};
    for (const arg of PY_PATH_ARGS) delete props[arg];
    const required = Array.isArray(yaml.input_schema.required)
      ? { required: yaml.input_schema.required.filter((n) => !PY_PATH_ARGS.includes(n as string)) }
      : {};
    yaml.input_schema = { ...yaml.input_schema, properties: props, ...required };
  }
  return { hone, nexau: entry.name, kind: kind.kind, yaml: { ...yaml, name: hone }, python: kind.python, entry, yamlRel };
}

type Binding = { kind: "fixed"; hone: string; python?: undefined } | { kind: "probe" | "python"; python?: MappedTool["python"] };

function bindingKind(entry: Record<string, unknown>, field: string, r: PackageReader): Binding | undefined {
  const binding = entry.binding;
  const kwargs = isRecord(entry.extra_kwargs) ? entry.extra_kwargs : {};
  const fixed = FIXED_TOOLS.find((f) => fixedBinding(f.nexau) === binding);
  if (fixed) {
    if (Object.keys(kwargs).length > 0)
      r.problem(AGENT, `${field}.extra_kwargs`, "hone's fixed tools take no fixed arguments: remove them");
    if (fixed.nexau !== entry.name)
      r.problem(AGENT, `${field}.name`, `is bound to HarnessTTT's ${fixed.nexau}, so name it ${fixed.nexau}`);
    return fixed.nexau === "probe_solution" ? { kind: "probe" } : { kind: "fixed", hone: fixed.hone };
  }
  if (binding === CUSTOM_TOOL_BINDING) return pythonBinding(entry, kwargs, field, r);
  r.problem(
    AGENT,
    `${field}.binding`,
    binding === undefined
      ? "is missing; hone runs HarnessTTT's discovery tools and Python tools bound through its custom_runtime dispatcher"
      : `"${String(binding)}" is a Python function hone cannot run; hone maps ${FIXED_TOOLS.map((f) => fixedBinding(f.nexau)).join(", ")} and ${CUSTOM_TOOL_BINDING} (a custom_tools/<name>.py with run(ctx, args)); remove the tool or rewrite it as such a Python tool`,
  );
  return undefined;
}

function pythonBinding(
  entry: Record<string, unknown>,
  kwargs: Record<string, unknown>,
  field: string,
  r: PackageReader,
): Binding | undefined {
  for (const k of Object.keys(kwargs))
    if (!PY_PATH_ARGS.includes(k))
      r.problem(AGENT, `${field}.extra_kwargs.${k}`, "hone passes a Python tool only its model arguments: remove it");
  const path = kwargs[PY_PATH_ARG] ?? kwargs.py_path;
  if (typeof path !== "string") {
    r.problem(
      AGENT,
      `${field}.extra_kwargs`,
      `must name the tool's code: ${PY_PATH_ARG}: ./custom_tools/${String(entry.name)}.py`,
    );
    return undefined;
  }
  const rel = r.relPath(path, AGENT, `${field}.extra_kwargs.${PY_PATH_ARG}`);
  if (rel === undefined) return undefined;
  if (rel !== `custom_tools/${String(entry.name)}.py`) {
    r.problem(
      AGENT,
      `${field}.extra_kwargs.${PY_PATH_ARG}`,
      `is ${path}; hone keeps a tool's code at ./custom_tools/${String(entry.name)}.py: move it there`,
    );
    return undefined;
  }
  const bytes = r.bytes(rel, AGENT, `${field}.extra_kwargs.${PY_PATH_ARG}`);
  return bytes ? { kind: "python", python: { rel, bytes } } : undefined;
}

function toolFile(
  v: unknown,
  name: string,
  rel: string,
  r: PackageReader,
): (Record<string, unknown> & { input_schema: Record<string, unknown> }) | undefined {
  if (!isRecord(v)) {
    r.problem(rel, undefined, "must be a mapping (type: tool, name, description, input_schema)");
    return undefined;
  }
  let ok = true;
  const bad = (field: string | undefined, message: string) => {
    r.problem(rel, field, message);
    ok = false;
  };
  for (const k of Object.keys(v))
    if (!TOOL_FILE_KEYS.includes(k)) bad(k, "is not a tool file field (type, name, description, input_schema)");
  if (v.type !== undefined && v.type !== "tool") bad("type", 'must be "tool"');
  if (v.name !== name) bad("name", `is ${JSON.stringify(v.name)} but agent.yaml lists the tool as "${name}"`);
  if (typeof v.description !== "string" || v.description.trim() === "" || v.description.length > 4000)
    bad("description", "must be text of 1 to 4000 characters");
  const schema = v.input_schema ?? { type: "object", properties: {} };
  if (!isRecord(schema) || schema.type !== "object") bad("input_schema", "must be a JSON Schema whose type is object");
  if (!ok || !isRecord(schema)) return undefined;
  return { type: "tool", name, description: String(v.description).trim(), input_schema: schema };
}

function mapSkills(v: unknown, r: PackageReader): MappedSkill[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    r.problem(AGENT, "skills", "must be a list of skill folders");
    return [];
  }
  const out: MappedSkill[] = [];
  for (const [i, s] of v.entries()) {
    const listed = typeof s === "string" ? s : isRecord(s) && typeof s.path === "string" ? s.path : undefined;
    if (listed === undefined) {
      r.problem(AGENT, `skills.${i}`, "must be a folder path or {name, path}");
      continue;
    }
    const folder = r.relPath(listed, AGENT, `skills.${i}`);
    if (folder === undefined) continue;
    const rel = folder.endsWith("SKILL.md") ? folder : `${folder}/SKILL.md`;
    const text = r.text(rel, AGENT, `skills.${i}`);
    const name = text === undefined ? undefined : skillName(text, rel, r);
    if (name === undefined || text === undefined) continue;
    if (out.some((o) => o.name === name)) r.problem(rel, "name", `skill "${name}" appears twice`);
    else out.push({ name, listed, rel, text });
  }
  return out;
}

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;

function skillName(text: string, rel: string, r: PackageReader): string | undefined {
  const m = FRONTMATTER.exec(text.slice(0, 8192));
  if (!m)
    return void r.problem(rel, undefined, "must start with YAML frontmatter between --- lines holding name and description");
  let meta: unknown;
  try {
    meta = parseYaml(m[1] ?? "", { maxAliasCount: 100 });
  } catch (err) {
    return void r.problem(rel, "frontmatter", `is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const parsed = skillFrontmatterSchema.safeParse(meta ?? {});
  if (!parsed.success) {
    for (const i of zodIssues(parsed.error.issues)) r.problem(rel, i.field, i.message);
    return undefined;
  }
  if (!SKILL_NAME.test(parsed.data.name)) return void r.problem(rel, "name", "is not a valid skill name");
  if (text.slice(m[0].length).trim() === "") return void r.problem(rel, "body", "the skill has no body after its frontmatter");
  return parsed.data.name;
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
  for (const i of zodIssues(parsed.error.issues))
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
