import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import { CONFIG_TEMPLATES } from "../init-templates.ts";
import { printJson, shellWord } from "../output.ts";

const HONE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** A path from `from` to `to` for a YAML file in `from`: relative (forward slashes) when close by, else absolute. */
function relPath(from: string, to: string): string {
  const rel = relative(from, to).split("\\").join("/") || ".";
  return /^(\.\.\/){3,}/.test(rel) ? to : rel;
}

/** Whether a folder is at `path` (false where nothing is, or where it cannot be looked at: mkdir then says why). */
function isFolder(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

export function registerInit(program: Command): void {
  program
    .command("init [folder]")
    .description(`write commented config files (${CONFIG_TEMPLATES.map((t) => t.file).join(", ")}) tied to their JSON Schemas`)
    .option("--force", "overwrite files that exist")
    .option("--json", "print what was written as JSON")
    .action((folderArg: string | undefined, opts) => {
      const folder = resolve(folderArg ?? ".");
      const targets = CONFIG_TEMPLATES.map((t) => ({ t, path: join(folder, t.file) }));
      const taken = targets.filter((x) => existsSync(x.path)).map((x) => x.path);
      // Nothing is written unless everything can be: --force replaces files, never a folder in a file's place.
      const folders = targets.filter((x) => isFolder(x.path)).map((x) => x.path);
      if (folders.length)
        throw new HoneError(
          "usage",
          `${folders.join(", ")} ${folders.length === 1 ? "is a folder" : "are folders"}, where hone init writes a file; move ${folders.length === 1 ? "it" : "them"} away or choose another folder (nothing was written)`,
        );
      if (taken.length && !opts.force)
        throw new HoneError(
          "usage",
          `${taken.join(", ")} already exist${taken.length === 1 ? "s" : ""}; remove, or pass --force`,
        );
      mkdirSync(folder, { recursive: true });
      const paths = { schemas: relPath(folder, join(HONE, "schemas")), harnesses: relPath(folder, join(HONE, "harnesses")) };
      for (const { t, path } of targets) writeFileSync(path, t.text(paths));
      if (opts.json) printJson({ folder, files: targets.map(({ t, path }) => ({ file: path, schema: t.schema })) });
      else {
        const shown = (p: string) => relative(process.cwd(), p) || p;
        process.stdout.write(
          `${targets.map(({ t, path }) => `wrote ${shown(path)}  (schemas/${t.schema}; run it: ${t.command.replace(t.file, shellWord(shown(path)))})`).join("\n")}\n`,
        );
      }
      process.exitCode = ExitCode.ok;
    });
}
