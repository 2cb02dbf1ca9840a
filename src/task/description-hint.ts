import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join, relative } from "node:path";
import { type HoneError, taskError } from "../errors.ts";

/**
 * The refusal of a task folder that has no description, naming what is really missing (never a file that does not
 * exist) and how to supply it: hone reads hone.yaml's `description`, else the config's `prompt.system_message`
 * (`llm.system_message`), else SimpleTES's `<folder name>.txt`. Two upstream shapes get their own advice: an
 * OpenEvolve folder whose configs sit in a subfolder (examples/sldbench's `configs/*.yaml`, run with --config) is
 * given one of them as the task; a SimpleTES folder whose instruction has another extension (kernelbench's
 * `<name>.triton`, passed with --instruction) is pointed at that file.
 */
export function missingDescription(dir: string, configPath: string | undefined): HoneError {
  const name = basename(dir);
  if (configPath)
    return taskError(
      configPath,
      "prompt.system_message",
      `the task has no description: this config sets no prompt.system_message (nor llm.system_message) and the folder has no hone.yaml description${existsSync(join(dir, `${name}.txt`)) ? "" : ` or ${name}.txt`}; set one of them`,
    );
  const missing = `has no description: no config.yaml (prompt.system_message), no hone.yaml (description) and no SimpleTES instruction ${name}.txt`;
  const texts = readdirSync(dir).filter((f) => f.endsWith(".txt") && !/^requirements/i.test(f));
  if (texts.length > 1)
    return taskError(
      dir,
      undefined,
      `${missing}, but several .txt files (${texts.sort().join(", ")}): copy the one SimpleTES is given with --instruction to ${name}.txt, or put its text in a hone.yaml as description:`,
    );
  const configs = describedConfigs(dir);
  if (configs.length > 0)
    return taskError(
      dir,
      undefined,
      `${missing}. Its configs in ${relative(dir, join(dir, configs[0] as string, ".."))}/ have one (OpenEvolve is run with --config): give one as the task, e.g. --task ${join(dir, configs[0] as string)}`,
    );
  const instruction = otherInstruction(dir);
  if (instruction)
    return taskError(
      dir,
      undefined,
      `${missing}. ${instruction} looks like the instruction SimpleTES is given with --instruction: copy it to ${name}.txt, or put its text in a hone.yaml as description:`,
    );
  return taskError(
    dir,
    undefined,
    `${missing}. Write what the program should achieve in a hone.yaml beside it (description: ...), or in config.yaml's prompt.system_message`,
  );
}

const isFile = (p: string) => existsSync(p) && statSync(p).isFile();
const MAX_CONFIG_BYTES = 1 << 20;

/** Configs in a subfolder of `dir` (one level down) that set a system message, as `sub/file.yaml`, sorted. */
function describedConfigs(dir: string): string[] {
  const found: string[] = [];
  for (const sub of readdirSync(dir, { withFileTypes: true })) {
    if (!sub.isDirectory() || sub.name.startsWith(".")) continue;
    for (const f of readdirSync(join(dir, sub.name)).sort()) {
      const path = join(dir, sub.name, f);
      if (
        /\.ya?ml$/.test(f) &&
        isFile(path) &&
        statSync(path).size < MAX_CONFIG_BYTES &&
        /system_message\s*:/.test(readFileSync(path, "utf8"))
      )
        found.push(join(sub.name, f));
    }
  }
  return found.sort();
}

/** A file named after the folder with another extension than .txt and code's (`level1_89_cumsum.triton`). */
function otherInstruction(dir: string): string | undefined {
  const name = basename(dir);
  const code = new Set([".py", ".txt", ".yaml", ".yml", ".json", ".js", ".cpp", ".rs", ".sh"]);
  return readdirSync(dir).find((f) => f.startsWith(`${name}.`) && !code.has(extname(f)) && isFile(join(dir, f)));
}
