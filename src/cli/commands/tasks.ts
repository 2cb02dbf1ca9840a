import { join, relative } from "node:path";
import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import type { RegistryEntry } from "../../task/registry.ts";
import { formatScore, printJson, shellWord, table } from "../output.ts";

function summary(t: DiscoveryTask) {
  return {
    id: t.id,
    domain: t.domain ?? null,
    metric: t.metric,
    direction: t.direction,
    best_known: t.reference?.value ?? null,
    source: t.reference?.source ?? t.source ?? null,
    budget: t.budget.maxEvals,
    timeout_sec: t.timeoutSec,
    dir: t.dir,
  };
}

const LAYOUT_NAMES = { openevolve: "OpenEvolve", skydiscover: "SkyDiscover (evaluator/ subfolder)", simpletes: "SimpleTES" };

function layoutLine(t: DiscoveryTask): string {
  const config = t.configPath ? `, ${relative(t.dir, t.configPath)}` : "";
  const phase = t.phase ? ` (phase ${t.phase.n}; phases ${t.phase.all.join(", ")}, chosen with --phase N)` : "";
  return `${LAYOUT_NAMES[t.layout]}: ${relative(t.dir, t.seedPath)}, ${relative(t.dir, t.evaluatorPath)}${config}${phase}`;
}

/** What `editable:` says of a seed with no EVOLVE-BLOCK markers (accepted in the OpenEvolve layout). */
const WHOLE_FILE =
  "the whole program: its seed has no EVOLVE-BLOCK markers, which OpenEvolve does not require (edits may change any line, and may not add markers)";

/** Every entry that loads; each one that does not is named on stderr with its reason, and the exit code says so. */
function loadAll(entries: RegistryEntry[], loadEntry: (e: RegistryEntry) => DiscoveryTask): DiscoveryTask[] {
  return entries.flatMap((e) => {
    try {
      return [loadEntry(e)];
    } catch (err) {
      if (!(err instanceof HoneError)) throw err;
      process.stderr.write(`hone: skipped ${e.id}: ${err.message}\n`);
      process.exitCode = ExitCode.badTask;
      return [];
    }
  });
}

export function registerTasks(program: Command): void {
  const tasks = program
    .command("tasks")
    .description("list discovery tasks (built-in, or a folder of task folders with --tasks-dir)")
    .option("--tasks-dir <dir>", "a folder of task folders with an optional tasks.yaml (default: HONE_TASKS, else the built-ins)")
    .option("--json", "print as JSON")
    .action(async (opts) => {
      const { BUILTIN_TASKS_DIR } = await import("../../task/builtin.ts");
      const { loadEntry, readRegistry } = await import("../../task/registry.ts");
      const dir = opts.tasksDir ?? process.env.HONE_TASKS ?? BUILTIN_TASKS_DIR;
      const list = loadAll(readRegistry(dir), loadEntry);
      if (opts.json) {
        printJson(list.map(summary));
        return;
      }
      const rows = list.map((t) => {
        const s = summary(t);
        return [
          s.id,
          s.domain ?? "-",
          s.metric,
          s.direction,
          formatScore(s.best_known),
          s.budget,
          (s.source ?? "-").slice(0, 70),
        ];
      });
      process.stdout.write(`${table(["id", "domain", "metric", "direction", "best known", "budget", "source"], rows)}\n`);
    });
  tasks
    .command("show <id>")
    .description("description, budget, layout, scoring and evaluator rules of one task, and what it needs to run here")
    .option("--phase <n>", "read the task folder's config_phase_N.yaml (default: config.yaml, else the first phase)", Number)
    .option("--json", "print as JSON")
    .action(async (id: string, opts) => {
      const { resolveTask, withPhase } = await import("../../task/builtin.ts");
      const { describeFallback } = await import("../../task/evaluation.ts");
      const { describeNeeds, taskNeeds } = await import("../../task/needs.ts");
      const { hasEvolveMarkers } = await import("../../task/evolve-block.ts");
      const t = await resolveTask(withPhase(id, opts.phase), tasks.opts().tasksDir, { check: false });
      const wholeFile = !hasEvolveMarkers(t.seedProgram);
      const needs = describeNeeds(t, taskNeeds(t));
      if (opts.json || tasks.opts().json) {
        printJson({
          ...summary(t),
          description: t.description,
          rules: t.rules ?? null,
          evaluator: t.evaluatorPath,
          seed_program: t.seedPath,
          cascade: t.cascade,
          evaluator_state: t.evaluatorState,
          layout: t.layout,
          editable: wholeFile ? "whole program" : "evolve blocks",
          config: t.configPath ?? null,
          phase: t.phase ?? null,
          scoring: { metric: t.metric, fallback: t.metricFallback, rule: describeFallback(t.metric, t.metricFallback) },
          declared_needs: t.declaredNeeds ?? [],
          needs,
        });
        return;
      }
      const lines = [
        `${t.id} (${t.domain ?? "task"}): ${t.metric}, ${t.direction === "maximize" ? "higher" : "lower"} is better`,
        `best known: ${t.reference ? `${t.reference.value}${t.reference.source ? ` (${t.reference.source})` : ""}` : `none published${t.source ? ` (${t.source})` : ""}`}`,
        `budget: ${t.budget.maxEvals} evaluator calls; ${t.timeoutSec} s per evaluation; ${t.memoryMb} MB`,
        `evaluator: ${t.evaluatorState === "kept" ? "one process for every evaluation (evaluator_state: kept)" : "a fresh copy for each evaluation"}`,
        `folder: ${t.dir}`,
        `layout: ${layoutLine(t)}`,
        ...(wholeFile ? [`editable: ${WHOLE_FILE}`] : []),
        `score: ${describeFallback(t.metric, t.metricFallback)}`,
        ...(t.cascade.enabled ? [`cascade: evaluate_stage1/2/3 while the score clears ${t.cascade.thresholds.join(", ")}`] : []),
        ...(t.declaredNeeds?.length ? [`declared needs: ${t.declaredNeeds.join(", ")}`] : []),
        needs.length > 0 ? `cannot run here: needs ${needs.join("; and ")}` : "runs here: every module it imports is installed",
        "",
        "description:",
        ...t.description.split("\n").map((l) => `  ${l}`),
      ];
      if (t.rules) lines.push("", "evaluator rules:", `  ${t.rules}`);
      process.stdout.write(`${lines.join("\n")}\n`);
    });
  tasks
    .command("new <folder>")
    .description("scaffold a task folder: a seed program, an evaluator, config.yaml and hone.yaml")
    .action(async (folder: string) => {
      const { scaffoldTask } = await import("../../task/scaffold.ts");
      const dir = scaffoldTask(folder);
      const tryIt = `npx hone evaluate --task ${shellWord(dir)} ${shellWord(join(dir, "initial_program.py"))}`;
      process.stdout.write(`created ${dir}\n  try it: ${tryIt}\n`);
      process.exitCode = ExitCode.ok;
    });
}
