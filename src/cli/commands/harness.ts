import { isAbsolute, relative, resolve } from "node:path";
import type { Command } from "commander";
import { ExitCode } from "../../errors.ts";
import { harnessProblems } from "../../harness/package.ts";
import type { MiddlewareConfig, ToolSpec } from "../../harness/types.ts";
import { type CheckReport, checkHarness, type Problem } from "../../sandbox/check.ts";
import { formatRefusal, gate } from "../../sandbox/gate.ts";
import { resolveTask } from "../../task/builtin.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import { printJson } from "../output.ts";

type Reported = Problem & { field?: string };

/**
 * Every problem of the package: when it does not load, each load problem (file and field) plus the static gate's
 * refusals of the code that did load; when it loads, the full check (gate, schemas, self-test, leak guard).
 */
async function report(dir: string, task: DiscoveryTask | undefined): Promise<CheckReport & { problems: Reported[] }> {
  const gated: Reported[] = [];
  const gateAll = (d: string, tools: ToolSpec[], mws: MiddlewareConfig[]) => {
    for (const m of [...tools, ...mws]) {
      if (m.kind !== "custom" || m.source === undefined || !m.file) continue;
      const kind = tools.includes(m as ToolSpec) ? "tool" : "middleware";
      for (const r of gate(m.source, kind))
        gated.push({ file: m.file, check: "gate", message: formatRefusal(relative(d, m.file), r) });
    }
  };
  const load = harnessProblems(dir, { generatedCode: gateAll });
  if (load.length === 0) return checkHarness(dir, { task });
  const problems: Reported[] = load.map((p) => ({ file: p.file, field: p.field, check: "load", message: p.message }));
  return { ok: false, problems: [...problems, ...gated] };
}

/** One problem as a line: the file (relative to the package) and field, unless the message already starts with them. */
function line(dir: string, p: Reported): string {
  const rel = isAbsolute(p.file) && !relative(dir, p.file).startsWith("..") ? relative(dir, p.file) || "." : p.file;
  const where = `${rel}${p.field ? ` (${p.field})` : ""}`;
  return `  refused [${p.check}] ${p.message.startsWith(rel) ? p.message : `${where}: ${p.message}`}`;
}

export function registerHarness(program: Command): void {
  const harness = program.command("harness").description("work with harness packages");
  harness
    .command("check <dir>")
    .description("validate, gate and self-test a package; list every problem with its file and field or line:column")
    .option("--task <id|folder>", "also run the leak guard against this task's evaluator and secrets")
    .option("--json", "print the report as JSON")
    .action(async (dirArg: string, opts) => {
      const dir = resolve(dirArg);
      const task = opts.task ? await resolveTask(opts.task) : undefined;
      const r = await report(dir, task);
      if (opts.json) {
        printJson({
          ok: r.ok,
          name: r.harness?.name ?? null,
          content_hash: r.harness?.contentHash ?? null,
          problems: r.problems,
        });
      } else {
        const h = r.harness;
        if (h) {
          const custom =
            h.tools.filter((t) => t.kind === "custom").length + h.middlewares.filter((m) => m.kind === "custom").length;
          process.stdout.write(
            `${h.name}: ${h.tools.length} tools, ${h.skills.length} skills, ${h.middlewares.length} middlewares (${custom} generated)\n`,
          );
        } else process.stdout.write(`${dir}: the package does not load\n`);
        for (const p of r.problems) process.stdout.write(`${line(dir, p)}\n`);
        if (!task && r.ok) process.stdout.write("  (no --task: the leak guard did not run)\n");
        process.stdout.write(
          r.ok ? "accepted\n" : `refused (${r.problems.length} problem${r.problems.length === 1 ? "" : "s"})\n`,
        );
      }
      process.exitCode = r.ok ? ExitCode.ok : ExitCode.badHarness;
    });
}
