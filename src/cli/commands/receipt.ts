import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { HoneError } from "../../errors.ts";
import { runReceipt } from "../../loop/receipt.ts";
import { describeNoise } from "../../measure/noise.ts";
import { printJson } from "../output.ts";

function resultLine(kind: string, s: Record<string, unknown> | null): string {
  if (!s) return "-";
  if (kind === "eval") return `accuracy ${s.accuracy} over ${s.completed} completed of ${s.tasks} (mean score ${s.meanScore})`;
  if (kind === "train") return `HEAD ${String(s.head).slice(0, 12)} after ${(s.epochs as unknown[]).length} decided epochs`;
  const at = typeof s.best_commit === "string" ? ` at ${s.best_commit.slice(0, 12)}` : "";
  return `best ${s.best_score} (start ${s.start_score})${at}`;
}

export function registerReceipt(program: Command): void {
  program
    .command("receipt <run-dir>")
    .description("what a run's numbers rest on: harness hashes, models, task and scorer, budgets, seeds, timings, failures")
    .option("--json", "print as JSON")
    .action((dir: string, opts) => {
      if (!existsSync(join(dir, "hone.db"))) throw new HoneError("usage", `${dir} is not a run directory (no hone.db)`);
      const r = runReceipt(dir);
      if (opts.json) return printJson(r);
      const lines = [
        `run      ${r.run.kind}, ${r.run.status}, ${r.run.started} → ${r.run.finished ?? "not finished"}`,
        `result   ${resultLine(r.run.kind, r.run.summary)}`,
        `task     ${r.task.id}${r.task.content ? ` (content ${r.task.content.slice(0, 12)}, ${r.task.metric} ${r.task.direction})` : ""}`,
        `scorer   ${r.scorer ? `${r.scorer.budget.maxEvals} evaluations per rollout, ${r.scorer.budget.timeoutSec} s each; hone ${r.scorer.hone}` : "-"}`,
        `settings ${Object.entries(r.settings)
          .map(([k, v]) => `${k}=${v}`)
          .join(", ")}`,
        ...r.models.map(
          (m) =>
            `${m.role.padEnd(8)} ${m.model} @ ${m.endpoint ?? "-"} (${m.dialect}${m.api_key_env ? `, key from $${m.api_key_env}` : ""}): ${m.calls} calls, ${m.cache_hits} cached, ${m.prompt_tokens}+${m.completion_tokens} tokens, latency p50 ${m.latency_ms_p50?.toFixed(0) ?? "-"} ms p95 ${m.latency_ms_p95?.toFixed(0) ?? "-"} ms (live calls only)${Object.keys(m.retried_faults).length ? `; retried faults ${JSON.stringify(m.retried_faults)}` : ""}`,
        ),
        `harness  seed ${r.harnesses.seed?.slice(0, 12)}, incumbent ${r.harnesses.incumbent_commit?.slice(0, 12)}, ${r.harnesses.candidates} candidates ${JSON.stringify(r.harnesses.by_status)}, ${r.harnesses.identities} measurement identities`,
        `measured ${r.measurements.rollouts} rollouts, ${r.measurements.evaluations} evaluations (${r.measurements.invalid_evaluations} invalid), ${r.measurements.rollout_seconds} rollout-seconds`,
        `noise    ${r.noise ? describeNoise(r.noise as Parameters<typeof describeNoise>[0]) : "-"}; ${r.measurements.noise_evaluations.total} re-evaluations outside the rollouts' budgets ${JSON.stringify(r.measurements.noise_evaluations.by_purpose)}`,
        `failed   ${r.failed.length === 0 ? "nothing" : ""}`,
        ...r.failed.map((f) => `  - ${f.what}: ${f.why}`),
      ];
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
