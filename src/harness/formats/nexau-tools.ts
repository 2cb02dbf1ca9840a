import { packageIssues } from "../issues.ts";
import { SKILL_NAME, skillFrontmatterSchema, TOOL_NAME } from "../schema.ts";
import { parseStrictYaml, yamlProblem } from "../yaml-cache.ts";
import { ADDED_TOOLS, CUSTOM_TOOL_BINDING, FIXED_TOOLS, fixedBinding, PY_PATH_ARG, PY_PATH_ARGS } from "./nexau-layout.ts";
import { isRecord, type PackageReader } from "./package-reader.ts";

// The tools and skills of a NexAU agent.yaml, read onto hone's (see nexau-map.ts for the rest of the file).

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

export function addedTool(name: keyof typeof ADDED_TOOLS): MappedTool {
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

export function mapTools(v: unknown, r: PackageReader): MappedTool[] {
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

export function mapSkills(v: unknown, r: PackageReader): MappedSkill[] {
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
    meta = parseStrictYaml(m[1] ?? "");
  } catch (err) {
    return void r.problem(rel, "frontmatter", yamlProblem(err));
  }
  const parsed = skillFrontmatterSchema.safeParse(meta ?? {});
  if (!parsed.success) {
    for (const i of packageIssues(parsed.error.issues, meta ?? {}, "a SKILL.md frontmatter field"))
      r.problem(rel, i.field, i.message);
    return undefined;
  }
  if (!SKILL_NAME.test(parsed.data.name)) return void r.problem(rel, "name", "is not a valid skill name");
  if (text.slice(m[0].length).trim() === "") return void r.problem(rel, "body", "the skill has no body after its frontmatter");
  return parsed.data.name;
}
