import { isAbsolute, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import type { MiddlewareConfig, ToolSpec } from "../../harness/types.ts";
import { oneLine } from "../../printable.ts";
import type { CheckReport, Problem } from "../../sandbox/check.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import { printJson } from "../output.ts";

type Reported = Problem & { field?: string };

/**
 * Every problem of the package: when it does not load, each load problem (file and field) plus the static gate's
 * refusals of the code that did load; when it loads, the full check (gate, schemas, self-test, leak guard).
 */
async function report(dir: string, task: DiscoveryTask | undefined): Promise<CheckReport & { problems: Reported[] }> {
  const { harnessProblems } = await import("../../harness/package.ts");
  const { checkHarness } = await import("../../sandbox/check.ts");
  const { formatRefusal, gate } = await import("../../sandbox/gate.ts");
  const { pythonGate } = await import("../../sandbox/python-tool-check.ts");
  const gated: Reported[] = [];
  const gateAll = (d: string, tools: ToolSpec[], mws: MiddlewareConfig[]) => {
    for (const m of [...tools, ...mws]) {
      if (m.kind !== "custom" || m.source === undefined || !m.file) continue;
      const kind = tools.includes(m as ToolSpec) ? "tool" : "middleware";
      const rel = relative(d, m.file);
      if (kind === "tool" && (m as ToolSpec).language === "python") {
        // A Python tool is gated by the Python gate (as checkHarness does), never by the JavaScript one.
        for (const p of pythonGate(m.source, rel))
          gated.push({ file: m.file, check: "gate", message: `${rel}:${p.line}:${p.col}: [${p.rule}] ${p.message}` });
      } else for (const r of gate(m.source, kind)) gated.push({ file: m.file, check: "gate", message: formatRefusal(rel, r) });
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
  return oneLine(`  refused [${p.check}] ${p.message.startsWith(rel) ? p.message : `${where}: ${p.message}`}`);
}

export function registerHarness(program: Command): void {
  const harness = program.command("harness").description("work with harness packages");
  harness
    .command("check <dir>")
    .description("validate, gate and self-test a package; list every problem with its file and field or line:column")
    .option("--task <id|folder>", "also run the leak guard against this task's evaluator and secrets")
    .option("--json", "print the report as JSON")
    .action(async (dirArg: string, opts) => {
      const { isNexauPackage, nexauNotes } = await import("../../harness/formats/nexau.ts");
      const { programNotes } = await import("../../harness/program.ts");
      const { resolveTask } = await import("../../task/builtin.ts");
      const dir = resolve(dirArg);
      const task = opts.task ? await resolveTask(opts.task) : undefined;
      const r = await report(dir, task);
      const program = r.harness?.program;
      const notes = program ? programNotes(program) : [];
      if (opts.json) {
        printJson({
          ok: r.ok,
          name: r.harness?.name ?? null,
          content_hash: r.harness?.contentHash ?? null,
          problems: r.problems,
          ...(isNexauPackage(join(dir, "agent.yaml")) ? { nexau_notes: nexauNotes(dir) } : {}),
          ...(program ? { notes } : {}),
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
        if (isNexauPackage(join(dir, "agent.yaml"))) printNotes("read as a NexAU package", nexauNotes(dir));
        printNotes("notes", notes);
        for (const p of r.problems) process.stdout.write(`${line(dir, p)}\n`);
        if (!task && r.ok) process.stdout.write("  (no --task: the leak guard did not run)\n");
        process.stdout.write(
          r.ok ? "accepted\n" : `refused (${r.problems.length} problem${r.problems.length === 1 ? "" : "s"})\n`,
        );
      }
      process.exitCode = r.ok ? ExitCode.ok : ExitCode.badHarness;
    });
  registerFormatVerbs(harness);
}

function printNotes(title: string, notes: string[]): void {
  if (notes.length > 0) process.stdout.write(`  ${title}:\n${notes.map((n) => `    - ${oneLine(n)}\n`).join("")}`);
}

/** `hone harness import` and `hone harness export`: NexAU packages (HarnessTTT's layout) in and out. */
function registerFormatVerbs(harness: Command): void {
  harness
    .command("import <dir>")
    .description("write a hone package from a NexAU package (HarnessTTT's layout); refused with every problem")
    .requiredOption("--out <dir>", "the new hone package's folder (must not exist or be empty)")
    .action(async (dir: string, opts: { out: string }) => {
      const { importNexau } = await import("../../harness/formats/nexau.ts");
      const r = importNexau(dir, opts.out);
      process.stdout.write(`imported ${dir} into ${r.out}\n`);
      printNotes("notes", r.notes);
      process.stdout.write(`check it with: hone harness check ${opts.out}\n`);
    });
  harness
    .command("export <dir>")
    .description("write a hone package in another system's layout, so a harness learned here moves back")
    .requiredOption("--format <format>", "the layout to write: nexau (NexAU's, as HarnessTTT runs it)")
    .requiredOption("--out <dir>", "the new package's folder (must not exist or be empty)")
    .action(async (dir: string, opts: { format: string; out: string }) => {
      if (opts.format !== "nexau") throw new HoneError("usage", `--format ${opts.format} is not known; the formats are: nexau`);
      const { NexauRefused, writePackage } = await import("../../harness/formats/nexau.ts");
      const { nexauExport } = await import("../../harness/formats/nexau-export.ts");
      const { loadHarness } = await import("../../harness/package.ts");
      const conv = nexauExport(loadHarness(dir, { generatedCode: () => {} }));
      if (conv.problems.length > 0) throw new NexauRefused(conv.problems);
      const out = writePackage(opts.out, conv.files);
      process.stdout.write(`exported ${dir} as a NexAU package into ${out}\n`);
      printNotes("notes", conv.notes);
    });
}
