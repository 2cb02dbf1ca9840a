import { readFileSync } from "node:fs";
import { HoneError } from "../../errors.ts";

// A rollout's sbatch job script: the user's template (or hone's) with its placeholders filled in. What goes into an
// #SBATCH line is read by sbatch's own parser, and the command by bash, so each is quoted for its reader: a run
// directory may hold spaces, quotes, `$` or `%` (which sbatch reads in a file name as a pattern: %j is the job id).

export interface SlurmSettings {
  partition?: string;
  gres?: string;
  /** Minutes per rollout job (sbatch --time). */
  timeMinutes?: number;
  /** Environment variables carried into the job besides PATH and HOME (names only; values from the submitting shell). */
  env?: string[];
  /** A job script template with {{name}}, {{output}}, {{directives}}, {{command}} placeholders. */
  template?: string;
}

const DEFAULT_TEMPLATE = `#!/bin/bash
#SBATCH --job-name={{name}}
#SBATCH --output={{output}}
{{directives}}
set -euo pipefail
{{command}}
`;

/** Variables every job carries when the submitting shell has them, besides the settings' own. */
const CARRIED = ["PATH", "HOME", "PYENV_ROOT", "HONE_CACHE_DIR"];

/** A word for bash, whatever it holds: single-quoted, each ' written as '\''. */
export const shellWord = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * A file name for an #SBATCH line: double-quoted (sbatch's parser takes a quoted value whole, spaces, ' and $
 * included) with each % doubled (sbatch reads %j, %x… as patterns, %% as %). sbatch has no way to carry a double
 * quote or a backslash there (a backslash turns the patterns off), and it splits a script into a heterogeneous job
 * at any #SBATCH line holding "hetjob" or "packjob", quoted or not, so a path with one of these is refused.
 */
export function sbatchPath(path: string, what: string): string {
  if (/["\\\n\r]|hetjob|packjob/i.test(path))
    throw new HoneError(
      "usage",
      `${what} ${JSON.stringify(path)} holds a double quote, a backslash, a line break, "hetjob" or "packjob", which an #SBATCH line cannot carry; use a run directory without them`,
    );
  return `"${path.replaceAll("%", "%%")}"`;
}

/** Checks the settings a script is made of: a value with a line break would add lines of its own to the script. */
function checkSlurmSettings(s: SlurmSettings): void {
  for (const [field, value] of [
    ["partition", s.partition],
    ["gres", s.gres],
  ] as const) {
    if (value !== undefined && !/^[^\s"'\\]+$/.test(value))
      throw new HoneError("usage", `slurm ${field} ${JSON.stringify(value)}: one word, without spaces or quotes`);
  }
  for (const name of s.env ?? [])
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new HoneError("usage", `slurm env ${JSON.stringify(name)} is not an environment variable's name`);
}

/** The template's text: the settings' file (which must run {{command}}) or hone's own. */
function readTemplate(path: string | undefined): string {
  if (path === undefined) return DEFAULT_TEMPLATE;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new HoneError("usage", `slurm template ${path}: cannot be read (${(err as Error).message})`);
  }
  if (!text.includes("{{command}}"))
    throw new HoneError("usage", `slurm template ${path} has no {{command}}: its jobs would never run a rollout`);
  return text;
}

/**
 * Everything a run's job scripts are made of, checked before anything is written: the settings, the template, and
 * the run directory (every job's log goes under it).
 */
export function checkSlurmRun(s: SlurmSettings, runDir?: string): string {
  checkSlurmSettings(s);
  if (runDir !== undefined) sbatchPath(runDir, "the run directory");
  return readTemplate(s.template);
}

/** The #SBATCH directives the settings ask for, the environment to export among them. */
function directives(s: SlurmSettings): string {
  const carry = [...CARRIED, ...(s.env ?? [])].filter((k) => process.env[k] !== undefined);
  return [
    s.partition ? `#SBATCH --partition=${s.partition}` : "",
    s.gres ? `#SBATCH --gres=${s.gres}` : "",
    `#SBATCH --time=${s.timeMinutes ?? 60}`,
    `#SBATCH --export=${carry.join(",") || "NONE"}`,
  ]
    .filter(Boolean)
    .join("\n");
}

/**
 * Whether `offset` in `text` is where a command starts: nothing but blanks before it on its line, and that line no
 * continuation of the one before (`srun --ntasks=1 \` then `  {{command}}`: the wrapper's arguments go on there).
 */
function startsLine(text: string, offset: number): boolean {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  if (!/^[ \t]*$/.test(before.slice(lineStart))) return false;
  const previous = before.slice(0, Math.max(0, lineStart - 1)).replace(/\r$/, "");
  let trailing = 0;
  while (previous[previous.length - 1 - trailing] === "\\") trailing++;
  return lineStart === 0 || trailing % 2 === 0;
}

/**
 * The job script: every placeholder filled wherever it appears, nothing in a value read as a replacement pattern.
 * {{output}} is the log's path as an #SBATCH line reads it (quoted), also where a template quoted it itself.
 * {{command}} is hone's command as words for bash; where it starts a line the shell is replaced by it (`exec`), and
 * after a wrapper (`srun {{command}}`, `timeout 3600 {{command}}`, `apptainer exec img.sif {{command}}`) it is the
 * wrapper's arguments as they are: an `exec` there would be the program the wrapper looks for.
 */
export function jobScript(template: string, s: SlurmSettings, job: { name: string; output: string; argv: string[] }): string {
  const command = job.argv.map(shellWord).join(" ");
  const values: Record<string, string> = {
    name: job.name,
    output: sbatchPath(job.output, "the job's log"),
    directives: directives(s),
  };
  return template.replace(
    /(["']?)\{\{(name|output|directives|command)\}\}\1/g,
    (_, quote: string, key: string, offset: number, text: string) => {
      if (key === "output") return values.output as string;
      if (key === "command") return `${quote}${quote === "" && startsLine(text, offset) ? "exec " : ""}${command}${quote}`;
      return `${quote}${values[key]}${quote}`;
    },
  );
}
