import { stringify } from "yaml";
import { NEXAU_SKILL_TOOL, ORIGIN_DIR, PROBE_TOOL_SOURCE } from "./nexau-layout.ts";
import { type MappedAgent, mapAgent } from "./nexau-map.ts";
import { type FormatProblem, PackageReader } from "./package-reader.ts";

/** A package written as files (relative path → content), with every problem that stops it and notes on what changed. */
export interface Conversion {
  files: Map<string, string | Buffer>;
  problems: FormatProblem[];
  notes: string[];
  /** For each written file, the file of the source package it came from (relative paths), to name it in errors. */
  origin: Map<string, string>;
}

const HEADER = `# Imported by \`hone harness import\` from a NexAU package (HarnessTTT's layout); ${ORIGIN_DIR}/ holds that package as
# it was, so \`hone harness export --format nexau\` writes it back with what was learned here.
`;

/**
 * A NexAU package as a hone package: agent.yaml in hone's fields, prompt.md, tools/<name>.tool.yaml under hone's
 * tool names, custom_tools/<name>.py, skills/<name>/SKILL.md, and the original files under nexau-origin/.
 */
export function nexauToHone(dir: string, withOrigin = true): Conversion {
  const r = new PackageReader(dir);
  const all = r.files();
  const mapped = mapAgent(r);
  const out: Conversion = { files: new Map(), problems: r.problems, notes: r.notes, origin: new Map() };
  if (!mapped) return out;
  writeHone(mapped, out);
  const used = new Set(out.origin.values());
  const kept = all.filter((f) => !used.has(f));
  if (kept.length > 0)
    r.note(
      `not used by hone, kept in ${ORIGIN_DIR}/ for export: ${kept.slice(0, 12).join(", ")}${kept.length > 12 ? ` and ${kept.length - 12} more` : ""}`,
    );
  if (withOrigin)
    for (const f of all) {
      const b = r.bytes(f);
      if (b) out.files.set(`${ORIGIN_DIR}/${f}`, b);
    }
  return out;
}

/**
 * The name the package's own prompt calls a tool by, when it is not hone's: NexAU offers each tool under its
 * agent.yaml name (edit_solution, evaluate_solution) and the skill loader as LoadSkill, so hone offers them so too.
 */
function offeredName(t: MappedAgent["tools"][number]): string | undefined {
  if (t.kind === "added") return t.hone === "load_skill" ? NEXAU_SKILL_TOOL : undefined;
  return t.nexau !== undefined && t.nexau !== t.hone ? t.nexau : undefined;
}

function put(out: Conversion, path: string, content: string | Buffer, from?: string): void {
  out.files.set(path, content);
  if (from !== undefined) out.origin.set(path, from);
}

function writeHone(m: MappedAgent, out: Conversion): void {
  const agent = {
    type: "agent",
    name: m.name,
    ...(m.description ? { description: m.description } : {}),
    system_prompt: m.prompt.rel !== undefined ? "prompt.md" : m.prompt.text,
    system_prompt_type: m.prompt.rel !== undefined ? "file" : "string",
    max_iterations: m.maxIterations,
    timeout: m.timeout,
    llm_config: m.llm,
    tools: m.tools.map((t) => {
      const offered = offeredName(t);
      return { name: t.hone, yaml_path: `tools/${t.hone}.tool.yaml`, ...(offered ? { offered_as: offered } : {}) };
    }),
    skills: m.skills.map((s) => `skills/${s.name}`),
    middlewares: m.middlewares.map((u) => ({ import: `hone:${u.hone}`, params: u.params })),
    stop_tools: m.stopTools,
  };
  put(out, "agent.yaml", HEADER + stringify(agent, { lineWidth: 0 }), "agent.yaml");
  if (m.prompt.rel !== undefined) put(out, "prompt.md", m.prompt.text, m.prompt.rel);
  for (const t of m.tools) {
    put(out, `tools/${t.hone}.tool.yaml`, stringify(t.yaml, { lineWidth: 0 }), t.yamlRel ?? "agent.yaml");
    if (t.kind === "python" && t.python) put(out, `custom_tools/${t.hone}.py`, t.python.bytes, t.python.rel);
    if (t.kind === "probe") put(out, `custom_tools/${t.hone}.js`, PROBE_TOOL_SOURCE, t.yamlRel);
  }
  for (const s of m.skills) put(out, `skills/${s.name}/SKILL.md`, s.text, s.rel);
}
