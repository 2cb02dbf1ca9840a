import { parse as parseYaml } from "yaml";
import { type HarnessSpec, validateSpec } from "../../../harness/spec.ts";
import { yamlNestedPast } from "../../../yaml-depth.ts";

/**
 * A harness's text components as the reflective methods (GEPA, SkillOpt, ACE) name them: `system_prompt`,
 * `skill_body.<skill>` and `tool_descriptions.<tool>`, read from a candidate's files (ctx.files) and written back as a
 * HarnessSpec merged over that candidate. The order is fixed (prompt, skills as listed, tools as listed), so a
 * round-robin pointer means the same component on every read of the same harness.
 */

const FRONTMATTER = /^---\r?\n[\s\S]*?\r?\n---\r?\n?([\s\S]*)$/;

type Entry = { name?: unknown; yaml_path?: unknown };

function yamlOf(text: string | undefined): Record<string, unknown> | undefined {
  // Nested past 64 levels: never a harness's, and composing it would exhaust the stack.
  if (text === undefined || yamlNestedPast(text, 64) !== undefined) return undefined;
  try {
    const v = parseYaml(text, { maxAliasCount: 50 });
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The body of a SKILL.md (after its frontmatter), trimmed; undefined when the file has no frontmatter. */
export function skillBodyOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const m = FRONTMATTER.exec(text);
  return m ? (m[1] ?? "").trim() : undefined;
}

/** The skill names a harness lists (folder names under skills/), in its agent.yaml order. */
export function skillNames(files: Record<string, string>): string[] {
  const agent = yamlOf(files["agent.yaml"]);
  const skills = Array.isArray(agent?.skills) ? agent.skills : [];
  return skills
    .filter((s): s is string => typeof s === "string")
    .map((s) => s.replace(/\/+$/, "").split("/").pop() ?? "")
    .filter((name) => name && files[`skills/${name}/SKILL.md`] !== undefined);
}

/** Every text component of a harness with its current text, in the fixed order. */
export function componentTexts(files: Record<string, string>): Record<string, string> {
  const agent = yamlOf(files["agent.yaml"]);
  if (!agent) return {};
  const out: Record<string, string> = {};
  const prompt = agent.system_prompt;
  if (typeof prompt === "string") {
    const inline = (agent.system_prompt_type ?? "file") !== "file";
    const text = inline ? prompt : files[prompt];
    if (typeof text === "string" && text.trim()) out.system_prompt = text.trim();
  }
  for (const name of skillNames(files)) {
    const body = skillBodyOf(files[`skills/${name}/SKILL.md`]);
    if (body) out[`skill_body.${name}`] = body;
  }
  const tools = Array.isArray(agent.tools) ? (agent.tools as Entry[]) : [];
  for (const t of tools) {
    if (typeof t?.name !== "string" || typeof t.yaml_path !== "string") continue;
    const description = yamlOf(files[t.yaml_path])?.description;
    if (typeof description === "string" && description.trim()) out[`tool_descriptions.${t.name}`] = description.trim();
  }
  return out;
}

/** A spec setting the given components (names as componentTexts gives them). */
export function componentSpec(changes: Record<string, string>): HarnessSpec {
  const spec: HarnessSpec = {};
  for (const [name, text] of Object.entries(changes)) {
    if (name === "system_prompt") spec.system_prompt = text;
    else if (name.startsWith("skill_body.")) spec.skill_body = { ...spec.skill_body, [name.slice(11)]: text };
    else if (name.startsWith("tool_descriptions."))
      spec.tool_descriptions = { ...spec.tool_descriptions, [name.slice(18)]: text };
    else throw new RangeError(`not a text component: ${name}`);
  }
  return spec;
}

/** The spec if it passes hone's spec schema, else the problems (a rewrite too long for its field, an empty text). */
export function checkedSpec(spec: HarnessSpec): { spec?: HarnessSpec; problem?: string } {
  const r = validateSpec(spec);
  if (r.spec) return { spec: r.spec };
  return { problem: r.problems.map((p) => `${p.field}: ${p.message}`).join("; ") };
}
