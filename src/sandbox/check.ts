import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import type { Ajv } from "ajv";
import { HoneError, harnessError } from "../errors.ts";
import { findLeaks } from "../harness/leak-guard.ts";
import { loadHarness } from "../harness/package.ts";
import { BUILTIN_TOOLS } from "../harness/schema.ts";
import type { Harness, MiddlewareConfig, ToolSpec } from "../harness/types.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import validateDraft07 from "./draft07-check.generated.ts";
import { formatRefusal, gate } from "./gate.ts";
import { GATE_RULES, MAX_GENERATED_MODULES } from "./gate-rules.ts";
import { pythonGate } from "./python-tool-check.ts";
import { selfTest } from "./self-test.ts";

export interface Problem {
  file: string;
  check: "load" | "gate" | "schema" | "self-test" | "leak";
  message: string;
}

/** The gate as the loader's hook: generated code that does not pass is refused at load time with every reason. */
export function gateGeneratedCode(dir: string, tools: readonly ToolSpec[], middlewares: readonly MiddlewareConfig[]): void {
  const lines = gateProblems(dir, tools, middlewares).map((p) => p.message);
  if (lines.length > 0) throw harnessError(dir, undefined, `generated code refused by the static gate:\n  ${lines.join("\n  ")}`);
}

function gateProblems(dir: string, tools: readonly ToolSpec[], middlewares: readonly MiddlewareConfig[]): Problem[] {
  const problems: Problem[] = [];
  for (const t of tools) {
    if (t.kind === "custom" && t.source !== undefined && t.language === "python") {
      const rel = relative(dir, t.file);
      for (const p of pythonGate(t.source, rel))
        problems.push({ file: t.file, check: "gate", message: `${rel}:${p.line}:${p.col}: [${p.rule}] ${p.message}` });
    } else if (t.kind === "custom" && t.source !== undefined) {
      for (const r of gate(t.source, "tool"))
        problems.push({ file: t.file, check: "gate", message: formatRefusal(relative(dir, t.file), r) });
    }
  }
  for (const m of middlewares) {
    if (m.kind === "custom" && m.source !== undefined && m.file) {
      for (const r of gate(m.source, "middleware"))
        problems.push({ file: m.file, check: "gate", message: formatRefusal(relative(dir, m.file), r) });
    }
  }
  const tooMany = moduleCountProblem(dir, tools, middlewares);
  if (tooMany) problems.push(tooMany);
  return problems;
}

/**
 * Each generated JavaScript tool and each listing of a generated middleware is a module in an isolate of its own,
 * which keeps what it allocates (up to its heap limit) for the whole rollout: their number is capped, or a package
 * listing one middleware a hundred times would hold gigabytes of the host's memory per rollout.
 */
function moduleCountProblem(
  dir: string,
  tools: readonly ToolSpec[],
  middlewares: readonly MiddlewareConfig[],
): Problem | undefined {
  const jsTools = tools.filter((t) => t.kind === "custom" && t.source !== undefined && t.language !== "python").length;
  const jsMiddlewares = middlewares.filter((m) => m.kind === "custom" && m.source !== undefined).length;
  const count = jsTools + jsMiddlewares;
  if (count <= MAX_GENERATED_MODULES) return undefined;
  const file = join(dir, "agent.yaml");
  return {
    file,
    check: "gate",
    message: `${relative(dir, file)}: [module-count] ${GATE_RULES["module-count"]}: this package has ${count} (${jsTools} tools, ${jsMiddlewares} middleware listings); merge them or list each middleware once`,
  };
}

/**
 * Ajv, for a schema that names a meta-schema other than draft-07: loaded and made only then (compiling a
 * meta-schema takes ~50 ms, and ajv is a third of a megabyte of code every run would otherwise parse).
 */
let otherDrafts: Ajv | undefined;
const newAjv = (): Ajv => {
  const { Ajv: AjvClass } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
  return new AjvClass({ strict: false, allErrors: true });
};
const DRAFT07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
type SchemaError = { instancePath: string; message?: string };

/** Why `schema` is not a valid JSON Schema, in ajv's words (its errorsText), or undefined when it is one. */
export function schemaError(schema: unknown): string | undefined {
  const declared = (schema as { $schema?: unknown } | null)?.$schema;
  if (declared === undefined || (typeof declared === "string" && DRAFT07.test(declared))) {
    if (validateDraft07(schema)) return undefined;
    const errors = (validateDraft07 as unknown as { errors?: SchemaError[] }).errors ?? [];
    return errors.length === 0 ? "No errors" : errors.map((e) => `data${e.instancePath} ${e.message}`).join(", ");
  }
  otherDrafts ??= newAjv();
  try {
    return otherDrafts.validateSchema(schema as object) ? undefined : otherDrafts.errorsText(otherDrafts.errors);
  } catch {
    return `its $schema ${JSON.stringify(declared)} is not a meta-schema hone knows (use draft-07, or leave $schema out)`;
  }
}

/** Tool schemas: valid JSON Schema, object type (checked by the loader), and no generated tool shadowing a fixed one. */
export function schemaProblems(harness: Harness): Problem[] {
  const problems: Problem[] = [];
  for (const t of harness.tools) {
    const error = schemaError(t.inputSchema);
    if (error) {
      problems.push({
        file: t.file,
        check: "schema",
        message: `input_schema is not a valid JSON Schema: ${error}`,
      });
    }
    if (t.kind === "custom" && (BUILTIN_TOOLS as readonly string[]).includes(t.name)) {
      problems.push({
        file: t.file,
        check: "schema",
        message: `the generated tool "${t.name}" clashes with hone's fixed tool of that name; choose another name`,
      });
    }
  }
  return problems;
}

/** Every text and code file the harness carries, for the leak guard. */
function harnessTexts(harness: Harness): { file: string; text: string }[] {
  return harness.files
    .filter((f) => !/\.(png|jpg|gif|bin)$/i.test(f))
    .map((f) => ({ file: join(harness.dir, f), text: readFileSync(join(harness.dir, f), "utf8") }));
}

export function leakProblems(harness: Harness, task: Pick<DiscoveryTask, "evaluatorPath" | "secrets">): Problem[] {
  const [evaluatorSource, ...marked] = task.secrets;
  const secrets = [
    ...(evaluatorSource ? [{ name: `the evaluator's source (${task.evaluatorPath})`, text: evaluatorSource }] : []),
    ...marked.map((text, i) => ({ name: `the task's secret #${i + 1}`, text })),
  ];
  return findLeaks(harnessTexts(harness), secrets).map((l) => ({
    file: l.file,
    check: "leak" as const,
    message: `${l.what}; a harness may not carry hidden task data`,
  }));
}

export interface CheckReport {
  ok: boolean;
  harness?: Harness;
  problems: Problem[];
}

/** `hone harness check`: validate, gate, check schemas, self-test and leak-guard a package; collect every refusal. */
export async function checkHarness(dir: string, opts: { task?: DiscoveryTask } = {}): Promise<CheckReport> {
  let harness: Harness;
  let gated: Problem[] = [];
  try {
    harness = loadHarness(dir, {
      generatedCode: (d, tools, mws) => {
        gated = gateProblems(d, tools, mws);
      },
    });
  } catch (err) {
    if (err instanceof HoneError) {
      // A refusal that lists several problems (a NexAU package's) is reported problem by problem.
      const many = (err as { problems?: { file: string; field?: string; message: string }[] }).problems;
      if (many?.length)
        return {
          ok: false,
          problems: many.map((p) => ({
            file: p.file,
            check: "load" as const,
            message: `${p.file}${p.field ? ` (${p.field})` : ""}: ${p.message}`,
          })),
        };
      return { ok: false, problems: [{ file: err.file ?? dir, check: "load", message: err.message }] };
    }
    throw err;
  }
  const problems = [...gated, ...schemaProblems(harness)];
  if (gated.length === 0) {
    for (const p of await selfTest(harness.tools, harness.middlewares, { program: opts.task?.seedProgram, task: opts.task }))
      problems.push({ ...p, check: "self-test" });
  }
  if (opts.task) problems.push(...leakProblems(harness, opts.task));
  return { ok: problems.length === 0, harness, problems };
}

/** Loads a package for running: everything `hone harness check` does, refusing the package on any problem. */
export async function prepareHarness(dir: string, opts: { task?: DiscoveryTask } = {}): Promise<Harness> {
  const report = await checkHarness(dir, opts);
  if (!report.ok || !report.harness) {
    const first = report.problems[0];
    if (report.problems.length === 1 && first?.check === "load")
      throw harnessError(first.file, undefined, first.message.replace(`${first.file}: `, ""));
    throw harnessError(
      dir,
      undefined,
      `the package is refused:\n  ${report.problems.map((p) => `[${p.check}] ${p.message}`).join("\n  ")}`,
    );
  }
  return report.harness;
}
