import type { Command } from "commander";
import type { z } from "zod";
import { printJson, table } from "../output.ts";

/** A method's parameters with their defaults, read from its schema. */
function parameters(schema: unknown, ZodObject: typeof z.ZodObject): Record<string, unknown> {
  const shape = schema instanceof ZodObject ? schema.shape : {};
  const defaults = (schema as z.ZodType).safeParse({});
  const values = defaults.success ? (defaults.data as Record<string, unknown>) : {};
  return Object.fromEntries(Object.keys(shape).map((k) => [k, values[k] ?? null]));
}

export function registerMethods(program: Command): void {
  program
    .command("methods")
    .description("every method `hone optimize --method` takes: what it edits, its parameters and their defaults")
    .option("--json", "print the methods as JSON")
    .action(async (opts) => {
      const { METHODS } = await import("../../method/registry.ts");
      const { ZodObject } = await import("zod");
      const rows = Object.values(METHODS).map((m) => ({
        name: m.name,
        edits: m.edits,
        starts_from: m.startFrom,
        params: parameters(m.params, ZodObject),
        summary: m.summary,
      }));
      if (opts.json) return printJson(rows);
      const text = (p: Record<string, unknown>) =>
        Object.entries(p)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(" ") || "-";
      process.stdout.write(
        `${table(
          ["method", "edits", "parameters", "what it is"],
          rows.map((r) => [r.name, r.edits, text(r.params), r.summary]),
        )}\n`,
      );
      process.stdout.write("\nA folder with method.json is a method too (bring your own): --method ./my-method/\n");
    });
}
