import type { Command } from "commander";
import { listBuiltinTasks } from "../../task/builtin.ts";
import { formatScore, printJson, table } from "../output.ts";

export function registerTasks(program: Command): void {
  program
    .command("tasks")
    .description("list the built-in discovery tasks")
    .option("--json", "print as JSON")
    .action((opts) => {
      const tasks = listBuiltinTasks();
      if (opts.json) {
        printJson(
          tasks.map((t) => ({
            id: t.id,
            domain: t.domain ?? null,
            metric: t.metric,
            direction: t.direction,
            best_known: t.reference?.value ?? null,
            source: t.reference?.source ?? null,
            budget: t.budget.maxEvals,
            dir: t.dir,
          })),
        );
        return;
      }
      const rows = tasks.map((t) => [
        t.id,
        t.domain ?? "-",
        t.metric,
        t.direction,
        formatScore(t.reference?.value),
        t.budget.maxEvals,
        t.reference?.source ?? "-",
      ]);
      process.stdout.write(`${table(["id", "domain", "metric", "direction", "best known", "budget", "source"], rows)}\n`);
    });
}
