import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type * as z from "zod";
import { configError, zodIssues } from "../errors.ts";
import { yamlNestedPast } from "../yaml-depth.ts";

/** Far above any options file a person writes (patches written inline included): refused before it is read. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/**
 * The text of an options file: a regular file, at most MAX_CONFIG_BYTES. Opened without blocking and checked on
 * the open file, so a FIFO (which would block the read, and with it every signal handler, for ever), a directory or
 * a device is refused naming it, even one put at the path after a check.
 */
function configText(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw configError(file, undefined, "does not exist");
    throw configError(file, undefined, `cannot be read (${code ?? (err as Error).message})`);
  }
  try {
    const s = fstatSync(fd);
    if (!s.isFile())
      throw configError(
        file,
        undefined,
        `is not a regular file (${s.isDirectory() ? "a directory" : s.isFIFO() ? "a FIFO" : "a special file"})`,
      );
    if (s.size > MAX_CONFIG_BYTES)
      throw configError(
        file,
        undefined,
        `is larger than ${MAX_CONFIG_BYTES / 1024 / 1024} MiB; an options file is a few hundred lines`,
      );
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** The deepest an options file nests collections, checked before it is composed (deeper ones exhaust the stack). */
const MAX_CONFIG_DEPTH = 64;

/** Reads a YAML options file and validates it; every error names the file and the field. */
export function readConfigFile<T>(file: string, schema: z.ZodType<T>): T {
  const text = configText(file);
  const deep = yamlNestedPast(text, MAX_CONFIG_DEPTH);
  if (deep !== undefined)
    throw configError(
      file,
      undefined,
      `nests mappings and lists more than ${MAX_CONFIG_DEPTH} levels deep (at line ${deep}); an options file nests a few: flatten it`,
    );
  let raw: unknown;
  try {
    raw = parseYaml(text);
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
