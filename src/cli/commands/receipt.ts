import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { HoneError } from "../../errors.ts";
import { printJson, readRunRecords } from "../output.ts";

export function registerReceipt(program: Command): void {
  program
    .command("receipt <run-dir>")
    .description("what a run's numbers rest on: harness hashes, models, task and scorer, budgets, seeds, timings, failures")
    .option("--json", "print as JSON")
    .action(async (dir: string, opts) => {
      const { formatReceipt, runReceipt } = await import("../../loop/receipt.ts");
      if (!existsSync(join(dir, "hone.db"))) throw new HoneError("usage", `${dir} is not a run directory (no hone.db)`);
      const r = await readRunRecords(dir, () => runReceipt(dir));
      if (opts.json) return printJson(r);
      process.stdout.write(`${formatReceipt(r)}\n`);
    });
}
