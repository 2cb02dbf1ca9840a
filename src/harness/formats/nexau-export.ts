import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml, stringify } from "yaml";
import { builtinMiddlewareParams } from "../middleware-params.ts";
import type { Harness, ToolSpec } from "../types.ts";
import { isNexauPackage } from "./nexau.ts";
import type { Conversion } from "./nexau-import.ts";
import {
  API_TYPE,
  CUSTOM_TOOL_BINDING,
  EXTRA_BODY_KEYS,
  FIXED_SCHEMAS,
  FIXED_TOOLS,
  fixedBinding,
  LLM_KEYS,
  MAPPED_MIDDLEWARES,
  ORIGIN_DIR,
  PROBE_TOOL_SOURCE,
  PY_PATH_ARG,
} from "./nexau-layout.ts";
import { type MappedAgent, type MappedTool, mapAgent, readAgentYaml } from "./nexau-map.ts";
import { isRecord, PackageReader, patchYaml, sameValue } from "./package-reader.ts";

// A hone harness written in NexAU's layout as HarnessTTT runs it. When the harness came from a NexAU package (its
// original is in nexau-origin/), every section a learned harness did not change is written back exactly as it was,
// byte for byte, and every file hone did not use is carried back; changed sections are mapped from hone's fields.

/** The NexAU package an imported hone package came from, read again (its agent.yaml raw and mapped). */
interface Origin {
  reader: PackageReader;
  raw: Record<string, unknown>;
  mapped: MappedAgent;
}

export function readOrigin(dir: string): Origin | undefined {
  if (!existsSync(join(dir, "agent.yaml"))) return undefined;
  const reader = new PackageReader(dir);
  const raw = readAgentYaml(reader);
  const mapped = mapAgent(reader, raw);
  return isRecord(raw) && mapped && reader.problems.length === 0 ? { reader, raw, mapped } : undefined;
}

interface Out extends Conversion {
  problem(file: string, message: string): void;
}

/** hone Harness → NexAU package files. `origin` is the NexAU package it was imported from, if any. */
export function honeToNexau(h: Harness, origin: Origin | undefined): Conversion {
  const out: Out = {
    files: new Map(),
    problems: [],
    notes: [],
    origin: new Map(),
    problem(file, message) {
      this.problems.push({ file, message });
    },
  };
  const o = origin?.raw ?? {};
  const om = origin?.mapped;
  const agent: Record<string, unknown> = origin ? { ...o } : { type: "agent" };
  const keep = <T>(key: string, same: boolean, value: T) => {
    if (!same) agent[key] = value;
  };
  keep("name", om?.name === h.name, h.name);
  keep("description", om?.description === h.description, h.description);
  if (h.description === undefined && om?.description !== undefined) delete agent.description;
  keep("max_iterations", om?.maxIterations === h.maxIterations, h.maxIterations);
  keep("timeout", om?.timeout === h.timeoutSec, Math.max(1, Math.ceil(h.timeoutSec)));
  writePrompt(h, origin, agent, out);
  writeLlm(h, origin, agent);
  agent.tools = writeTools(h, origin, out);
  writeSkills(h, origin, agent, out);
  agent.middlewares = writeMiddlewares(h, origin, out);
  keep("stop_tools", om !== undefined && sameValue(om.stopTools, h.stopTools), h.stopTools.map(nexauName));
  if (!om)
    out.notes.push(
      "bindings name HarnessTTT's inner harness (inner.harness.tools.*, inner.harness.middleware.*): the package runs there",
    );
  const agentText = origin?.reader.text("agent.yaml");
  out.files.set("agent.yaml", agentText !== undefined ? patchYaml(agentText, o, agent) : stringify(agent, { lineWidth: 0 }));
  if (origin) carry(origin, out);
  return out;
}

const nexauName = (hone: string) => FIXED_TOOLS.find((f) => f.hone === hone)?.nexau ?? hone;
const dotted = (rel: string) => `./${rel}`;
const clean = (path: string) => path.replace(/^\.\//, "");

function writePrompt(h: Harness, origin: Origin | undefined, agent: Record<string, unknown>, out: Out): void {
  const p = origin?.mapped.prompt;
  if (p && p.text.trim() === h.systemPrompt) {
    if (p.rel !== undefined) out.files.set(p.rel, origin?.reader.bytes(p.rel) ?? p.text);
    return;
  }
  const rel = p?.rel ?? "prompt.md";
  out.files.set(rel, `${h.systemPrompt}\n`);
  agent.system_prompt = dotted(rel);
  agent.system_prompt_type = "file";
}

/** hone's llm_config fields from a loaded harness, in the shape mapAgent gives for a NexAU llm_config. */
function honeLlm(h: Harness): Record<string, unknown> {
  return {
    ...h.sampling,
    model: h.defaults.model,
    base_url: h.defaults.baseUrl,
    api_key: h.defaults.apiKeyEnv ? `\${env.${h.defaults.apiKeyEnv}}` : undefined,
  };
}

function writeLlm(h: Harness, origin: Origin | undefined, agent: Record<string, unknown>): void {
  const mine = honeLlm(h);
  if (origin && sameValue(origin.mapped.llm, mine)) return;
  const llm: Record<string, unknown> = isRecord(agent.llm_config) ? { ...agent.llm_config } : { api_type: API_TYPE };
  const extra: Record<string, unknown> = isRecord(llm.extra_body) ? { ...llm.extra_body } : {};
  for (const k of LLM_KEYS) if (mine[k] === undefined) delete (EXTRA_BODY_KEYS.includes(k) && k in extra ? extra : llm)[k];
  if (mine.api_key !== undefined) llm.api_key = mine.api_key;
  else if (typeof llm.api_key === "string" && llm.api_key.startsWith("${")) delete llm.api_key;
  for (const k of LLM_KEYS) {
    const v = mine[k];
    if (v === undefined) continue;
    if (EXTRA_BODY_KEYS.includes(k) && !(k in llm)) extra[k] = v;
    else llm[k] = v;
  }
  if (Object.keys(extra).length > 0) llm.extra_body = extra;
  else delete llm.extra_body;
  agent.llm_config = llm;
}

function writeTools(h: Harness, origin: Origin | undefined, out: Out): Record<string, unknown>[] {
  const entries: Record<string, unknown>[] = [];
  for (const t of h.tools) {
    if (t.kind === "builtin" && (t.name === "view_program" || t.name === "load_skill")) {
      out.notes.push(
        t.name === "view_program"
          ? "view_program is left out: HarnessTTT shows the program in its first message"
          : "load_skill is left out: NexAU gives every agent with skills its LoadSkill tool",
      );
      continue;
    }
    const before = origin?.mapped.tools.find((x) => x.hone === t.name && x.kind !== "added");
    const was = before ? originToolFile(before, origin) : undefined;
    const shaped = nexauTool(t, out, isRecord(was) && isRecord(was.input_schema) ? was.input_schema : undefined);
    if (!shaped) continue;
    const entry = before?.kind === shaped.kind && before.entry ? before.entry : shaped.entry;
    const rel = clean(String(entry.yaml_path));
    const originText = before?.yamlRel === rel ? origin?.reader.text(rel) : undefined;
    const same = was !== undefined && sameValue(was, shaped.yaml);
    const text = originText !== undefined && !same ? patchToolFile(originText, shaped.yaml) : originText;
    out.files.set(rel, text ?? stringify(shaped.yaml, { lineWidth: 0 }));
    if (shaped.kind === "python") out.files.set(`custom_tools/${t.name}.py`, t.source ?? "");
    entries.push(entry);
  }
  return entries;
}

/** A tool file of the original edited to hold `value` (a description or schema learned here). */
function patchToolFile(text: string, value: Record<string, unknown>): string {
  const raw = parseYaml(text);
  return isRecord(raw)
    ? patchYaml(text, raw, { ...raw, ...value, type: raw.type ?? value.type })
    : stringify(value, { lineWidth: 0 });
}

/** The NexAU tool file as it was, in the shape nexauTool writes (type filled in, description trimmed). */
function originToolFile(before: MappedTool, origin: Origin | undefined): unknown {
  const raw = before.yamlRel ? origin?.reader.yaml(before.yamlRel) : undefined;
  if (!isRecord(raw)) return undefined;
  return {
    type: raw.type ?? "tool",
    name: raw.name,
    description: typeof raw.description === "string" ? raw.description.trim() : raw.description,
    input_schema: raw.input_schema ?? { type: "object", properties: {} },
  };
}

type Shaped = { kind: MappedTool["kind"]; entry: Record<string, unknown>; yaml: Record<string, unknown> };

function nexauTool(t: ToolSpec, out: Out, wasSchema?: Record<string, unknown>): Shaped | undefined {
  const file = (name: string, schema: Record<string, unknown>) => ({
    type: "tool",
    name,
    description: t.description,
    input_schema: schema,
  });
  const fixed = FIXED_TOOLS.find((f) => f.hone === t.name);
  const isProbe = t.kind === "custom" && t.name === "probe_solution" && t.source === PROBE_TOOL_SOURCE;
  if ((t.kind === "builtin" && fixed) || isProbe) {
    const name = fixed?.nexau ?? "probe_solution";
    let schema = t.inputSchema;
    if (name === "edit_solution" && !isRecord(isRecord(schema.properties) ? schema.properties.code : undefined)) {
      schema = FIXED_SCHEMAS.edit_solution as Record<string, unknown>;
      out.notes.push(
        "edit_program's arguments (edits, block) become edit_solution's one `code` argument: check that its description still fits",
      );
    }
    const entry = { name, yaml_path: `./tools/${name}.tool.yaml`, binding: fixedBinding(name) };
    return { kind: isProbe ? "probe" : "fixed", entry, yaml: file(name, schema) };
  }
  if (t.kind === "builtin") {
    out.problem(t.file, `hone's ${t.name} tool has no NexAU counterpart; remove it from the package before exporting`);
    return undefined;
  }
  if (t.language !== "python") {
    out.problem(
      t.file,
      "is a JavaScript tool; HarnessTTT runs Python tools only: port it to custom_tools/<name>.py (run(ctx, args))",
    );
    return undefined;
  }
  if (FIXED_TOOLS.some((f) => f.nexau === t.name)) {
    out.problem(t.file, `"${t.name}" is one of HarnessTTT's fixed tools; rename the generated tool`);
    return undefined;
  }
  const path = `./custom_tools/${t.name}.py`;
  const props = isRecord(t.inputSchema.properties) ? t.inputSchema.properties : {};
  const wasProp = isRecord(wasSchema?.properties) ? wasSchema.properties[PY_PATH_ARG] : undefined;
  const pathProp =
    isRecord(wasProp) && wasProp.const === path
      ? wasProp
      : { type: "string", const: path, description: "Trusted dispatcher binding; omit from tool calls." };
  const schema = { ...t.inputSchema, properties: { ...props, [PY_PATH_ARG]: pathProp } };
  const entry = {
    name: t.name,
    yaml_path: `./tools/${t.name}.tool.yaml`,
    binding: CUSTOM_TOOL_BINDING,
    extra_kwargs: { [PY_PATH_ARG]: path },
  };
  return { kind: "python", entry, yaml: file(t.name, schema) };
}

function writeSkills(h: Harness, origin: Origin | undefined, agent: Record<string, unknown>, out: Out): void {
  const om = origin?.mapped;
  const listed = h.skills.map((s) => {
    const before = om?.skills.find((x) => x.name === s.name);
    const rel = before?.rel ?? `skills/${s.name}/SKILL.md`;
    out.files.set(rel, readFileSync(s.file));
    return before?.listed ?? `./skills/${s.name}`;
  });
  const same =
    om !== undefined &&
    sameValue(
      om.skills.map((s) => s.name),
      h.skills.map((s) => s.name),
    );
  if (!same) agent.skills = listed;
}

function writeMiddlewares(h: Harness, origin: Origin | undefined, out: Out): unknown[] {
  const before = Array.isArray(origin?.raw.middlewares) ? origin.raw.middlewares : [];
  const uses = origin?.mapped.middlewares ?? [];
  const mappedIndex = new Set(uses.map((u) => u.index));
  const list: unknown[] = [];
  const taken = new Set<number>();
  let next = 0;
  // Entries of the original hone read but does not apply (advisory ones) stay where they were.
  const flush = (to: number) => {
    for (; next < to; next++) if (!mappedIndex.has(next)) list.push(before[next]);
  };
  for (const m of h.middlewares) {
    const spec = MAPPED_MIDDLEWARES.find((s) => s.hone === m.name);
    if (m.kind === "custom" || !spec) {
      out.problem(
        m.file ?? h.dir,
        m.kind === "custom"
          ? `generated middleware ${m.name} is JavaScript; HarnessTTT's is a Python before_model hook: port it by hand`
          : `hone:${m.name} has no NexAU counterpart; remove it from agent.yaml before exporting`,
      );
      continue;
    }
    const use = uses.find((u) => u.hone === m.name && !taken.has(u.index));
    const nexauParams = Object.fromEntries(Object.entries(spec.params).map(([n, hn]) => [n, m.params[hn]]));
    if (m.name === "budget_reminder" && m.params.message !== builtinMiddlewareParams.budget_reminder.parse({}).message)
      out.notes.push("hone:budget_reminder's message is not exported: HarnessTTT's BudgetReminderMiddleware writes its own");
    if (!use) {
      list.push({ import: spec.imports[0], params: nexauParams });
      continue;
    }
    taken.add(use.index);
    flush(use.index);
    next = Math.max(next, use.index + 1);
    const was = before[use.index];
    const wasParams = isRecord(was) && isRecord(was.params) ? was.params : {};
    if (sameValue(use.params, m.params)) list.push(was);
    else list.push({ import: isRecord(was) ? was.import : was, params: { ...wasParams, ...nexauParams } });
  }
  flush(before.length);
  return list;
}

/** Files of the original hone did not read (provenance, HarnessTTT's middleware copies, …) go back unchanged. */
function carry(origin: Origin, out: Out): void {
  const consumed = new Set<string>(["agent.yaml"]);
  const m = origin.mapped;
  if (m.prompt.rel) consumed.add(m.prompt.rel);
  for (const t of m.tools) {
    if (t.yamlRel) consumed.add(t.yamlRel);
    if (t.python) consumed.add(t.python.rel);
  }
  for (const s of m.skills) consumed.add(s.rel);
  for (const f of origin.reader.files()) {
    if (consumed.has(f)) continue;
    if (out.files.has(f)) {
      out.notes.push(`${f} of the original is replaced by the exported one`);
      continue;
    }
    const b = origin.reader.bytes(f);
    if (b) out.files.set(f, b);
  }
}

/** `hone harness export --format nexau`: a loaded harness written as a NexAU package; refused on any problem. */
export function nexauExport(h: Harness): Conversion {
  const originDir = isNexauPackage(join(h.dir, "agent.yaml")) ? h.dir : join(h.dir, ORIGIN_DIR);
  return honeToNexau(h, readOrigin(originDir));
}
