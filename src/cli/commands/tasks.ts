import type { Command } from "commander";
import { ExitCode } from "../../errors.ts";
import { BUILTIN_TASKS_DIR, resolveTask } from "../../task/builtin.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import { loadEntry, readRegistry } from "../../task/registry.ts";
import { scaffoldTask } from "../../task/scaffold.ts";
import { formatScore, printJson, table } from "../output.ts";

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

export function registerTasks(program: Command): void {
  const tasks = program
    .command("tasks")
    .description("list discovery tasks (built-in, or a folder of task folders with --tasks-dir)")
    .option("--tasks-dir <dir>", "a folder of task folders with an optional tasks.yaml (default: HONE_TASKS, else the built-ins)")
    .option("--json", "print as JSON")
    .action((opts) => {
      const dir = opts.tasksDir ?? process.env.HONE_TASKS ?? BUILTIN_TASKS_DIR;
      const list = readRegistry(dir).map(loadEntry);
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
    .description("description, budget and evaluator rules of one task")
    .option("--json", "print as JSON")
    .action(async (id: string, opts) => {
      const t = await resolveTask(id, tasks.opts().tasksDir);
      if (opts.json) {
        printJson({
          ...summary(t),
          description: t.description,
          rules: t.rules ?? null,
          evaluator: t.evaluatorPath,
          seed_program: t.seedPath,
          cascade: t.cascade,
        });
        return;
      }
      const lines = [
        `${t.id} (${t.domain ?? "task"}): ${t.metric}, ${t.direction === "maximize" ? "higher" : "lower"} is better`,
        `best known: ${t.reference ? `${t.reference.value}${t.reference.source ? ` (${t.reference.source})` : ""}` : `none published${t.source ? ` (${t.source})` : ""}`}`,
        `budget: ${t.budget.maxEvals} evaluator calls; ${t.timeoutSec} s per evaluation; ${t.memoryMb} MB`,
        `folder: ${t.dir}`,
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
    .action((folder: string) => {
      const dir = scaffoldTask(folder);
      process.stdout.write(`created ${dir}\n  try it: npx hone evaluate --task ${dir} ${dir}/initial_program.py\n`);
      process.exitCode = ExitCode.ok;
    });
}
