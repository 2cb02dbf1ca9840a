import { existsSync, readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type * as z from "zod";
import { configError, zodIssues } from "../errors.ts";

/** Reads a YAML options file and validates it; every error names the file and the field. */
export function readConfigFile<T>(file: string, schema: z.ZodType<T>): T {
  if (!existsSync(file)) throw configError(file, undefined, "does not exist");
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, "utf8"));
  } catch (err) {
    throw configError(file, undefined, `is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const r = schema.safeParse(raw ?? {});
  if (!r.success) {
    const first = zodIssues(r.error.issues)[0];
    throw configError(file, first?.field, first?.message ?? "invalid");
  }
  return r.data;
}
