import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import type * as z from "zod";
import { HoneError, harnessError } from "../errors.ts";
import { contentHash, listPackageFiles } from "./files.ts";
import { cordisRefusal, otherAgentConfigHint } from "./formats/cordis.ts";
import { isNexauPackage, loadNexauHarness } from "./formats/nexau.ts";
import { packageIssues } from "./issues.ts";
import { BUILTIN_MIDDLEWARE_PREFIX, type BuiltinMiddlewareName, builtinMiddlewareParams } from "./middleware-params.ts";
import { escapingLinks, readPackageText } from "./package-files.ts";
import { isProgramHarness, loadProgramHarness, programAsHarness } from "./program.ts";
import { agentSchema, BUILTIN_TOOLS, toolFileSchema } from "./schema.ts";
import { loadSkill } from "./skill.ts";
import { oneLine } from "./spec.ts";
import type { Harness, MiddlewareConfig, Skill, ToolSpec } from "./types.ts";
import { parseYamlCached, yamlProblem } from "./yaml-cache.ts";

/** One reason a package is refused: the file, the field where there is one, and what is wrong. */
export interface HarnessProblem {
  file: string;
  field?: string;
  message: string;
}

const where = (p: HarnessProblem) => `${p.file}${p.field ? ` (${p.field})` : ""}`;

/** The problem with its control characters written out (\u001b): a package's names and values reach a terminal. */
const shown = (p: HarnessProblem): HarnessProblem => ({
  file: oneLine(p.file),
  ...(p.field !== undefined ? { field: oneLine(p.field) } : {}),
  message: oneLine(p.message),
});

/** A package refused for every problem found in it; the error's file and field are the first problem's. */
export class HarnessRefused extends HoneError {
  readonly problems: HarnessProblem[];
  constructor(raw: HarnessProblem[]) {
    const problems = raw.map(shown);
    const [first, ...rest] = problems as [HarnessProblem, ...HarnessProblem[]];
    const more = rest.map((p) => `\n  ${where(p)}: ${p.message}`).join("");
    super("badHarness", `${first.message}${more}`, { file: first.file, field: first.field });
    this.problems = problems;
  }
}

/** Collects problems instead of stopping at the first, so a check can list them all. */
class Problems {
  readonly list: HarnessProblem[] = [];
  add(file: string, field: string | undefined, message: string): void {
    this.list.push(shown({ file, field, message }));
  }
  /** Runs `fn`; a package error it throws becomes a problem (or several) and the result is undefined. */
  try<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      // A refusal that lists several problems (this loader's, or a format reader's such as NexAU's) keeps them all.
      if (err instanceof HoneError && Array.isArray((err as Partial<HarnessRefused>).problems))
        this.list.push(...(err as HarnessRefused).problems.map(shown));
      else if (err instanceof HoneError && err.exit === "badHarness") {
        const file = err.file ?? "";
        const prefix = `${where({ file, field: err.field, message: "" })}: `;
        this.add(file, err.field, err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message);
      } else throw err;
      return undefined;
    }
  }
}

function readYamlFile(dir: string, file: string): unknown {
  const text = readPackageText(dir, file);
  try {
    return parseYamlCached(text) ?? {};
  } catch (err) {
    throw harnessError(file, undefined, yamlProblem(err));
  }
}

/** Validates with zod; every issue is a problem of its own, named by its field. */
function parseWith<T>(schema: z.ZodType<T>, value: unknown, file: string, fieldPrefix = "", what?: string): T {
  const r = schema.safeParse(value);
  if (!r.success)
    throw new HarnessRefused(
      packageIssues(r.error.issues, value, what ?? `a field of ${basename(file)}`).map((i) => ({
        file,
        field: `${fieldPrefix}${i.field}`,
        message: i.message,
      })),
    );
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

type Agent = z.infer<typeof agentSchema>;

/**
 * Loads and validates a harness package directory. Every error names the file and the field; a package with
 * several problems is refused with all of them (HarnessRefused), not only the first.
 */
export function loadHarness(dirArg: string, opts: LoadOptions = {}): Harness {
  const dir = resolve(dirArg);
  if (!existsSync(dir)) throw harnessError(dir, undefined, "is not a harness package (no such directory)");
  if (!statSync(dir).isDirectory())
    throw harnessError(dir, undefined, "is not a harness package (a file, not a folder); give the package's folder");
  // A harness program (harness.json) loads as a Harness that says so; rollouts and QA tasks run it as a program.
  if (isProgramHarness(dir)) return programAsHarness(loadProgramHarness(dir));
  const agentFile = join(dir, "agent.yaml");
  if (!existsSync(agentFile))
    throw harnessError(
      dir,
      undefined,
      cordisRefusal(dir) ??
        `has no agent.yaml; a harness package is a folder with agent.yaml, prompt.md, skills/ and tools/${runFolderHint(dir)}${otherAgentConfigHint(dir)}`,
    );
  // A NexAU / HarnessTTT package (module:function bindings, module:Class middlewares) is read by its own reader.
  if (isNexauPackage(agentFile)) return loadNexauHarness(dir, opts, loadHarness);
  const problems = new Problems();
  for (const l of escapingLinks(dir)) problems.add(l.file, undefined, l.message);
  const agent = problems.try(() => parseWith(agentSchema, readYamlFile(dir, agentFile), agentFile));
  if (!agent) {
    // Without a valid agent.yaml nothing says which files are used: check the ones the layout names.
    checkLayout(dir, problems);
    throw new HarnessRefused(problems.list);
  }
  const systemPrompt = problems.try(() => readSystemPrompt(dir, agent, agentFile));
  const tools = agent.tools
    .map((ref, i) => problems.try(() => loadTool(dir, ref, `tools.${i}`, agentFile)))
    .filter((t): t is ToolSpec => t !== undefined);
  const seen = new Set<string>();
  tools.forEach((t, i) => {
    if (seen.has(t.name)) problems.add(agentFile, `tools.${i}.name`, `"${t.name}" is listed twice`);
    seen.add(t.name);
  });
  const offered = new Set<string>();
  tools.forEach((t, i) => {
    const name = t.offeredAs ?? t.name;
    if (offered.has(name))
      problems.add(agentFile, `tools.${i}.offered_as`, `the model would be offered two tools named "${name}"`);
    offered.add(name);
  });
  const skills = loadSkills(dir, agent.skills, agentFile, problems);
  const middlewares = agent.middlewares
    .map((ref, i) => problems.try(() => loadMiddleware(dir, ref, `middlewares.${i}`, agentFile)))
    .filter((m): m is MiddlewareConfig => m !== undefined);

  const customDir = join(dir, "custom_tools");
  const hasGenerated =
    tools.some((t) => t.kind === "custom") ||
    middlewares.some((m) => m.kind === "custom") ||
    existsSync(customDir) ||
    existsSync(join(dir, "middlewares"));
  if (hasGenerated) {
    if (!opts.generatedCode)
      problems.add(
        join(dir, tools.some((t) => t.kind === "custom") || existsSync(customDir) ? "custom_tools" : "middlewares"),
        undefined,
        "this package carries generated code, and this entry point runs packages without generated code only",
      );
    else problems.try(() => opts.generatedCode?.(dir, tools, middlewares));
  }
  if (problems.list.length > 0 || systemPrompt === undefined) throw new HarnessRefused(problems.list);

  const files = problems.try(() => listPackageFiles(dir));
  if (!files) throw new HarnessRefused(problems.list);
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

/**
 * Where `dir` is a run folder rather than a package, the package inside it: an optimize run's learned harness (`best/`)
 * or the harness a run, eval or train copied in (`harness/`); "" where neither is there.
 */
function runFolderHint(dir: string): string {
  for (const [sub, what] of [
    ["best", "its best harness (a hone optimize run folder)"],
    ["harness", "the harness it ran (a run folder)"],
  ] as const)
    if (existsSync(join(dir, sub, "agent.yaml")) || existsSync(join(dir, sub, "harness.json")))
      return `; this looks like a run folder: give ${join(dir, sub)}, ${what}`;
  return "";
}

/** Every problem of the package at `dir` (none when it loads), for `hone harness check`. */
export function harnessProblems(dir: string, opts: LoadOptions = {}): HarnessProblem[] {
  const problems = new Problems();
  problems.try(() => loadHarness(dir, opts));
  return problems.list;
}

function readSystemPrompt(dir: string, agent: Agent, agentFile: string): string {
  if (agent.system_prompt_type !== "file") return agent.system_prompt.trim();
  const promptFile = insidePackage(dir, agent.system_prompt, agentFile, "system_prompt");
  if (!existsSync(promptFile))
    throw harnessError(agentFile, "system_prompt", `names ${agent.system_prompt}, which does not exist`);
  const text = readPackageText(dir, promptFile).trim();
  if (text.length === 0) throw harnessError(promptFile, undefined, "the system prompt is empty");
  return text;
}

function loadTool(dir: string, ref: Agent["tools"][number], field: string, agentFile: string): ToolSpec {
  const file = insidePackage(dir, ref.yaml_path, agentFile, `${field}.yaml_path`);
  if (!existsSync(file)) throw harnessError(agentFile, `${field}.yaml_path`, `names ${ref.yaml_path}, which does not exist`);
  const tf = parseWith(toolFileSchema, readYamlFile(dir, file), file);
  if (tf.name !== ref.name) throw harnessError(file, "name", `is "${tf.name}" but agent.yaml lists it as "${ref.name}"`);
  const customFile = customToolFile(join(dir, "custom_tools"), tf.name, file);
  const isBuiltin = (BUILTIN_TOOLS as readonly string[]).includes(tf.name) && !existsSync(customFile);
  if (!isBuiltin && !existsSync(customFile))
    throw harnessError(
      file,
      "name",
      `"${tf.name}" is not one of hone's tools (${BUILTIN_TOOLS.join(", ")}) and custom_tools/${tf.name}.js does not exist (nor custom_tools/${tf.name}.py)`,
    );
  const base = {
    name: tf.name,
    description: tf.description.trim(),
    inputSchema: tf.input_schema,
    ...(ref.offered_as && ref.offered_as !== tf.name ? { offeredAs: ref.offered_as } : {}),
  };
  return isBuiltin
    ? { ...base, kind: "builtin", file, ...((ref.binding ?? tf.binding) ? { binding: ref.binding ?? tf.binding } : {}) }
    : {
        ...base,
        kind: "custom",
        file: customFile,
        source: readPackageText(dir, customFile),
        language: customFile.endsWith(".py") ? "python" : "javascript",
      };
}

function loadMiddleware(dir: string, ref: Agent["middlewares"][number], field: string, agentFile: string): MiddlewareConfig {
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
    const known = Object.keys((schema as unknown as { shape?: object }).shape ?? {}).join(", ");
    const params = parseWith(
      schema as z.ZodType<Record<string, unknown>>,
      ref.params,
      agentFile,
      `${field}.params.`,
      `a parameter of ${ref.import}${known ? ` (its parameters: ${known})` : ""}`,
    );
    return { name, kind: "builtin", params };
  }
  const file = insidePackage(dir, ref.import, agentFile, `${field}.import`);
  if (!/^middlewares\/[a-z][a-z0-9_]{2,31}\.js$/.test(relative(dir, file)))
    throw harnessError(agentFile, `${field}.import`, `"${ref.import}" must be hone:<name> or middlewares/<name>.js`);
  if (!existsSync(file)) throw harnessError(agentFile, `${field}.import`, `names ${ref.import}, which does not exist`);
  const name = relative(join(dir, "middlewares"), file).replace(/\.js$/, "");
  return { name, kind: "custom", params: ref.params, file, source: readPackageText(dir, file) };
}

/** custom_tools/<name>.js, or custom_tools/<name>.py (a Python tool, HarnessTTT's `run(ctx, args)`); not both. */
function customToolFile(customDir: string, name: string, toolFile: string): string {
  const js = join(customDir, `${name}.js`);
  const py = join(customDir, `${name}.py`);
  if (existsSync(js) && existsSync(py))
    throw harnessError(toolFile, "name", `custom_tools/${name}.js and custom_tools/${name}.py both exist; keep one of them`);
  return existsSync(py) ? py : js;
}

function samplingOf(c: Agent["llm_config"]): Harness["sampling"] {
  const { model: _m, base_url: _b, api_key: _k, api_type: _t, ...sampling } = c;
  return sampling;
}

const skillFolders = (dir: string) => {
  const skillsDir = join(dir, "skills");
  return existsSync(skillsDir)
    ? readdirSync(skillsDir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => join(skillsDir, e.name))
        .sort((a, b) => a.localeCompare(b))
    : [];
};

function loadSkills(dir: string, listed: Agent["skills"], agentFile: string, problems: Problems): Skill[] {
  const paths =
    listed?.map((s, i) => ({
      path: problems.try(() => insidePackage(dir, typeof s === "string" ? s : s.path, agentFile, `skills.${i}`)),
      field: `skills.${i}`,
    })) ?? skillFolders(dir).map((path) => ({ path, field: "skills" }));
  const skills: Skill[] = [];
  for (const { path, field } of paths) {
    if (path === undefined) continue;
    const file = path.endsWith("SKILL.md") ? path : join(path, "SKILL.md");
    if (!existsSync(file)) problems.add(agentFile, field, `${relative(dir, file)} does not exist`);
    else {
      const skill = problems.try(() => loadSkill(file, readPackageText(dir, file)));
      if (skill) skills.push(skill);
    }
  }
  const names = new Set<string>();
  for (const s of skills) {
    if (names.has(s.name)) problems.add(s.file, "name", `skill "${s.name}" appears twice`);
    names.add(s.name);
  }
  return skills;
}

/** With agent.yaml unreadable: the prompt, every tool file and every skill the standard layout has. */
function checkLayout(dir: string, problems: Problems): void {
  const prompt = join(dir, "prompt.md");
  if (existsSync(prompt)) problems.try(() => readPackageText(dir, prompt));
  const toolsDir = join(dir, "tools");
  if (existsSync(toolsDir))
    for (const f of readdirSync(toolsDir)
      .filter((n) => n.endsWith(".tool.yaml"))
      .sort())
      problems.try(() => parseWith(toolFileSchema, readYamlFile(dir, join(toolsDir, f)), join(toolsDir, f)));
  for (const path of skillFolders(dir)) {
    const file = join(path, "SKILL.md");
    if (existsSync(file)) problems.try(() => loadSkill(file, readPackageText(dir, file)));
  }
}
