import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { harnessError, zodIssues } from "../errors.ts";
import { contentHash, listFiles } from "./files.ts";
import { isNexauPackage, loadNexauHarness } from "./formats/nexau.ts";
import { BUILTIN_MIDDLEWARE_PREFIX, type BuiltinMiddlewareName, builtinMiddlewareParams } from "./middleware-params.ts";
import { isProgramHarness, loadProgramHarness, programAsHarness } from "./program.ts";
import { agentSchema, BUILTIN_TOOLS, toolFileSchema } from "./schema.ts";
import { loadSkill } from "./skill.ts";
import type { Harness, MiddlewareConfig, Skill, ToolSpec } from "./types.ts";

// Candidates share most of their files (tool definitions, often agent.yaml), and a run loads each package several
// times; parsing YAML was the largest single cost of a replayed run. Keyed by the text, so an edit is never missed.
const parsedYaml = new Map<string, unknown>();

function readYamlFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    throw harnessError(file, undefined, "cannot be read (missing file?)");
  }
  let parsed = parsedYaml.get(text);
  if (parsed === undefined) {
    try {
      parsed = parseYaml(text) ?? {};
    } catch (err) {
      throw harnessError(file, undefined, `is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
    }
    if (parsedYaml.size >= 512) parsedYaml.clear();
    parsedYaml.set(text, parsed);
  }
  return structuredClone(parsed);
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, file: string, fieldPrefix = ""): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    const issues = zodIssues(r.error.issues);
    const first = issues[0];
    const more =
      issues.length > 1
        ? ` (and ${issues.length - 1} more: ${issues
            .slice(1)
            .map((i) => `${fieldPrefix}${i.field}`)
            .join(", ")})`
        : "";
    throw harnessError(file, `${fieldPrefix}${first?.field ?? ""}`, `${first?.message ?? "invalid"}${more}`);
  }
  return r.data;
}

/** Keeps package paths inside the package: no absolute paths, no `..` escapes. */
function insidePackage(dir: string, path: string, file: string, field: string): string {
  const full = resolve(dir, path);
  const rel = relative(dir, full);
  if (rel.startsWith("..") || resolve(rel) === rel) throw harnessError(file, field, `"${path}" points outside the package`);
  return full;
}

export interface LoadOptions {
  /** Called for packages that carry generated code (custom_tools/, middlewares/); without it such packages are refused. */
  generatedCode?: (dir: string, tools: ToolSpec[], middlewares: MiddlewareConfig[]) => void;
}

/** Loads and validates a harness package directory. Every error names the file and the field. */
export function loadHarness(dirArg: string, opts: LoadOptions = {}): Harness {
  const dir = resolve(dirArg);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw harnessError(dir, undefined, "is not a harness package (no such directory)");
  // A harness program (harness.json) loads as a Harness that says so; rollouts and QA tasks run it as a program.
  if (isProgramHarness(dir)) return programAsHarness(loadProgramHarness(dir));
  const agentFile = join(dir, "agent.yaml");
  if (!existsSync(agentFile))
    throw harnessError(
      dir,
      undefined,
      "has no agent.yaml; a harness package is a folder with agent.yaml, prompt.md, skills/ and tools/",
    );
  // A NexAU / HarnessTTT package (module:function bindings, module:Class middlewares) is read by its own reader.
  if (isNexauPackage(agentFile)) return loadNexauHarness(dir, opts, loadHarness);
  const agent = parseWith(agentSchema, readYamlFile(agentFile), agentFile);

  let systemPrompt: string;
  if (agent.system_prompt_type === "file") {
    const promptFile = insidePackage(dir, agent.system_prompt, agentFile, "system_prompt");
    if (!existsSync(promptFile))
      throw harnessError(agentFile, "system_prompt", `names ${agent.system_prompt}, which does not exist`);
    systemPrompt = readFileSync(promptFile, "utf8").trim();
    if (systemPrompt.length === 0) throw harnessError(promptFile, undefined, "the system prompt is empty");
  } else {
    systemPrompt = agent.system_prompt.trim();
  }

  const customDir = join(dir, "custom_tools");
  const tools: ToolSpec[] = agent.tools.map((ref, i) => {
    const field = `tools.${i}`;
    const file = insidePackage(dir, ref.yaml_path, agentFile, `${field}.yaml_path`);
    if (!existsSync(file)) throw harnessError(agentFile, `${field}.yaml_path`, `names ${ref.yaml_path}, which does not exist`);
    const tf = parseWith(toolFileSchema, readYamlFile(file), file);
    if (tf.name !== ref.name) throw harnessError(file, "name", `is "${tf.name}" but agent.yaml lists it as "${ref.name}"`);
    const customFile = customToolFile(customDir, tf.name, file);
    const isBuiltin = (BUILTIN_TOOLS as readonly string[]).includes(tf.name) && !existsSync(customFile);
    if (!isBuiltin && !existsSync(customFile)) {
      throw harnessError(
        file,
        "name",
        `"${tf.name}" is not one of hone's tools (${BUILTIN_TOOLS.join(", ")}) and custom_tools/${tf.name}.js does not exist (nor custom_tools/${tf.name}.py)`,
      );
    }
    return isBuiltin
      ? {
          name: tf.name,
          description: tf.description.trim(),
          inputSchema: tf.input_schema,
          kind: "builtin" as const,
          file,
          ...((ref.binding ?? tf.binding) ? { binding: ref.binding ?? tf.binding } : {}),
        }
      : {
          name: tf.name,
          description: tf.description.trim(),
          inputSchema: tf.input_schema,
          kind: "custom" as const,
          file: customFile,
          source: readFileSync(customFile, "utf8"),
          language: customFile.endsWith(".py") ? ("python" as const) : ("javascript" as const),
        };
  });
  const seen = new Set<string>();
  tools.forEach((t, i) => {
    if (seen.has(t.name)) throw harnessError(agentFile, `tools.${i}.name`, `"${t.name}" is listed twice`);
    seen.add(t.name);
  });

  const skills = loadSkills(dir, agent.skills, agentFile);

  const middlewares: MiddlewareConfig[] = agent.middlewares.map((ref, i) => {
    const field = `middlewares.${i}`;
    if (ref.import.startsWith(BUILTIN_MIDDLEWARE_PREFIX)) {
      const name = ref.import.slice(BUILTIN_MIDDLEWARE_PREFIX.length);
      const schema = builtinMiddlewareParams[name as BuiltinMiddlewareName];
      if (!schema) {
        throw harnessError(
          agentFile,
          `${field}.import`,
          `"${ref.import}" is not a hone middleware; built-ins are ${Object.keys(builtinMiddlewareParams)
            .map((n) => `hone:${n}`)
            .join(", ")}`,
        );
      }
      const params = parseWith(schema as z.ZodType<Record<string, unknown>>, ref.params, agentFile, `${field}.params.`);
      return { name, kind: "builtin" as const, params };
    }
    const file = insidePackage(dir, ref.import, agentFile, `${field}.import`);
    if (!/^middlewares\/[a-z][a-z0-9_]{2,31}\.js$/.test(relative(dir, file))) {
      throw harnessError(agentFile, `${field}.import`, `"${ref.import}" must be hone:<name> or middlewares/<name>.js`);
    }
    if (!existsSync(file)) throw harnessError(agentFile, `${field}.import`, `names ${ref.import}, which does not exist`);
    const name = relative(join(dir, "middlewares"), file).replace(/\.js$/, "");
    return { name, kind: "custom" as const, params: ref.params, file, source: readFileSync(file, "utf8") };
  });

  const hasGenerated =
    tools.some((t) => t.kind === "custom") ||
    middlewares.some((m) => m.kind === "custom") ||
    existsSync(customDir) ||
    existsSync(join(dir, "middlewares"));
  if (hasGenerated) {
    if (!opts.generatedCode) {
      throw harnessError(
        join(dir, tools.some((t) => t.kind === "custom") || existsSync(customDir) ? "custom_tools" : "middlewares"),
        undefined,
        "this package carries generated code, and this entry point runs packages without generated code only",
      );
    }
    opts.generatedCode(dir, tools, middlewares);
  }

  const files = listFiles(dir);
  return {
    dir,
    name: agent.name,
    description: agent.description,
    systemPrompt,
    maxIterations: agent.max_iterations,
    timeoutSec: agent.timeout,
    sampling: samplingOf(agent.llm_config),
    defaults: {
      model: agent.llm_config.model,
      baseUrl: agent.llm_config.base_url,
      apiKeyEnv: agent.llm_config.api_key?.slice("${env.".length, -1),
    },
    tools,
    skills,
    middlewares,
    stopTools: agent.stop_tools,
    contentHash: contentHash(dir, files),
    files,
  };
}

/** custom_tools/<name>.js, or custom_tools/<name>.py (a Python tool, HarnessTTT's `run(ctx, args)`); not both. */
function customToolFile(customDir: string, name: string, toolFile: string): string {
  const js = join(customDir, `${name}.js`);
  const py = join(customDir, `${name}.py`);
  if (existsSync(js) && existsSync(py))
    throw harnessError(toolFile, "name", `custom_tools/${name}.js and custom_tools/${name}.py both exist; keep one of them`);
  return existsSync(py) ? py : js;
}

function samplingOf(c: z.infer<typeof agentSchema>["llm_config"]): Harness["sampling"] {
  const { model: _m, base_url: _b, api_key: _k, api_type: _t, ...sampling } = c;
  return sampling;
}

function loadSkills(dir: string, listed: z.infer<typeof agentSchema>["skills"], agentFile: string): Skill[] {
  const skillsDir = join(dir, "skills");
  const paths =
    listed?.map((s, i) => ({
      path: insidePackage(dir, typeof s === "string" ? s : s.path, agentFile, `skills.${i}`),
      field: `skills.${i}`,
    })) ??
    (existsSync(skillsDir)
      ? readdirSync(skillsDir, { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => ({ path: join(skillsDir, e.name), field: "skills" }))
          .sort((a, b) => a.path.localeCompare(b.path))
      : []);
  const skills = paths.map(({ path, field }) => {
    const file = path.endsWith("SKILL.md") ? path : join(path, "SKILL.md");
    if (!existsSync(file)) throw harnessError(agentFile, field, `${relative(dir, file)} does not exist`);
    return loadSkill(file);
  });
  const names = new Set<string>();
  for (const s of skills) {
    if (names.has(s.name)) throw harnessError(s.file, "name", `skill "${s.name}" appears twice`);
    names.add(s.name);
  }
  return skills;
}
