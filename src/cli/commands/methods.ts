import type { Command } from "commander";
import type * as z from "zod";
import type { DerivedDefault, Method } from "../../method/method.ts";
import { printJson, table } from "../output.ts";

/** The Ks `hone methods` works a K-dependent default out for (SAH's K = 8 and the small runs' sizes). */
const SHOWN_K = [1, 2, 4, 8];

/** A method's parameters with their defaults, read from its schema; a derived default shown as its rule. */
function parameters(m: Method<unknown>): Record<string, unknown> {
  const shape = m.params.def.type === "object" ? (m.params as z.ZodObject).shape : {};
  const defaults = m.params.safeParse({});
  const values = defaults.success ? (defaults.data as Record<string, unknown>) : {};
  return Object.fromEntries(Object.keys(shape).map((k) => [k, m.derivedDefaults?.[k]?.rule ?? values[k] ?? null]));
}

/** A derived default as the JSON gives it: its rule, in words, and its value at a few Ks where it depends on K. */
function derived(d: DerivedDefault) {
  const byK = d.forK ? Object.fromEntries(SHOWN_K.map((k) => [String(k), d.forK?.(k)])) : undefined;
  return { rule: d.rule, words: d.words, ...(byK ? { by_k: byK } : {}) };
}

/** One line per derived default under the table: `method  parameter: words (K=1: …, K=2: …)`. */
function notes(methods: Method<unknown>[]): string {
  const lines = methods.flatMap((m) =>
    Object.entries(m.derivedDefaults ?? {}).map(([k, d]) => {
      const at = d.forK ? ` (${SHOWN_K.map((n) => `K=${n}: ${d.forK?.(n)}`).join(", ")})` : "";
      return `  ${m.name} ${k}: ${d.words}${at}`;
    }),
  );
  return lines.length ? `\nDefaults worked out when the run starts (K = --proposals):\n${lines.join("\n")}\n` : "";
}

export function registerMethods(program: Command): void {
  program
    .command("methods")
    .description("every method `hone optimize --method` takes: what it edits, its parameters and their defaults")
    .option("--json", "print the methods as JSON")
    .action(async (opts) => {
      const { METHODS } = await import("../../method/registry.ts");
      const methods = Object.values(METHODS) as Method<unknown>[];
      const rows = methods.map((m) => ({
        name: m.name,
        edits: m.edits,
        starts_from: m.startFrom,
        params: parameters(m),
        derived_defaults: Object.fromEntries(Object.entries(m.derivedDefaults ?? {}).map(([k, d]) => [k, derived(d)])),
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
      process.stdout.write(notes(methods));
      process.stdout.write("\nA folder with method.json is a method too (bring your own): --method ./my-method/\n");
    });
}
