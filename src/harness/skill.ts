import { readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { harnessError } from "../errors.ts";
import { packageIssues } from "./issues.ts";
import { skillFrontmatterSchema } from "./schema.ts";
import type { Skill } from "./types.ts";
import { parseStrictYaml, yamlProblem } from "./yaml-cache.ts";

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

/** Reads a SKILL.md per the Agent Skills spec: YAML frontmatter with name and description, then the body. */
export function loadSkill(file: string, text = readFileSync(file, "utf8")): Skill {
  // A byte order mark (editors on Windows write one) is not content: agent.yaml and tool files are read past it too.
  const m = FRONTMATTER.exec(text.startsWith("\uFEFF") ? text.slice(1) : text);
  if (!m) throw harnessError(file, undefined, "must start with YAML frontmatter between --- lines holding name and description");
  let meta: unknown;
  try {
    meta = parseStrictYaml(m[1] ?? "");
  } catch (err) {
    throw harnessError(file, "frontmatter", yamlProblem(err));
  }
  const r = skillFrontmatterSchema.safeParse(meta ?? {});
  if (!r.success) {
    const first = packageIssues(
      r.error.issues,
      meta ?? {},
      "a SKILL.md frontmatter field (name, description, license, compatibility, metadata, allowed-tools)",
    )[0];
    throw harnessError(file, first?.field, first?.message ?? "invalid frontmatter");
  }
  const folder = basename(dirname(file));
  if (r.data.name !== folder)
    throw harnessError(file, "name", `is "${r.data.name}" but the skill's folder is "${folder}"; they must match`);
  const body = (m[2] ?? "").trim();
  if (body.length === 0) throw harnessError(file, "body", "the skill has no body after its frontmatter");
  return { name: r.data.name, description: r.data.description.trim(), body, file };
}
