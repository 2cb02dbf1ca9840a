import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import type { DoctorCheck } from "../doctor.ts";
import { addModelOptions, modelSettingsFrom } from "../model-options.ts";
import { printJson } from "../output.ts";

/** Exit 0 when all that is needed works; 4 when python3 with numpy or git is missing; 6 when a named service is not answering. */
function exitCode(checks: DoctorCheck[]): number {
  const bad = checks.filter((c) => c.required && !c.ok);
  if (bad.some((c) => c.id === "endpoint" || c.id === "queue")) return ExitCode.endpoint;
  return bad.length > 0 ? ExitCode.badTask : ExitCode.ok;
}

function print(checks: DoctorCheck[]): void {
  const lines = ["what this machine can do for hone:", ""];
  for (const c of checks) {
    lines.push(`  ${c.ok ? "ok     " : c.required ? "MISSING" : "missing"}  ${c.id.padEnd(12)} ${c.found}`);
    lines.push(`  ${" ".repeat(7)}  ${" ".repeat(12)} ${c.ok ? "enables" : "would enable"}: ${c.enables}`);
    if (!c.ok && c.install)
      lines.push(`  ${" ".repeat(7)}  ${" ".repeat(12)} install: Debian: ${c.install.debian} · macOS: ${c.install.macos}`);
  }
  const missing = checks.filter((c) => !c.ok);
  const needed = missing.filter((c) => c.required).map((c) => c.id);
  lines.push(
    "",
    needed.length
      ? `not ready: ${needed.join(", ")} (see above)`
      : `ready${missing.length ? `; without ${missing.map((c) => c.id).join(", ")} (each line above says what it would add)` : ", with everything"}`,
  );
  process.stdout.write(`${lines.join("\n")}\n`);
}

export function registerDoctor(program: Command): void {
  const cmd = program
    .command("doctor")
    .description("what this machine can do for hone, what each missing piece would enable, and how to install it")
    .option("--queue <redis-url>", "also check that this Redis (for hone worker and --queue) answers")
    .option("--json", "print the checks as JSON");
  addModelOptions(cmd).action(async (opts) => {
    const m = modelSettingsFrom(opts);
    if (m.baseUrl && !m.model) throw new HoneError("usage", "--base-url needs --model (the model to check on it)");
    // A model alone names no endpoint: checking nothing and saying "ready" would read as if it had been checked.
    if (m.model && !m.baseUrl)
      throw new HoneError(
        "usage",
        `--model ${m.model} needs --base-url (the endpoint that serves it); the built-in offline model needs no endpoint (hone models check --model offline tries it)`,
      );
    const { doctor } = await import("../doctor.ts");
    const checks = await doctor({
      queue: opts.queue,
      endpoint:
        m.baseUrl && m.model ? { baseUrl: m.baseUrl, model: m.model, dialect: m.dialect, apiKeyEnv: m.apiKeyEnv } : undefined,
    });
    if (opts.json) printJson({ ok: exitCode(checks) === ExitCode.ok, checks });
    else print(checks);
    process.exitCode = exitCode(checks);
  });
}
