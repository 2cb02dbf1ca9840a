import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { type HoneError, taskError } from "../errors.ts";

/**
 * The task-folder layouts of the field, found by the files a folder holds:
 * - `openevolve`: `initial_program.*`, `evaluator.py`, `config.yaml` or `config_phase_N.yaml` (OpenEvolve, and
 *   SkyDiscover's and hone's own folders that keep the evaluator beside the seed);
 * - `skydiscover`: the evaluator in `evaluator/evaluator.py`, beside the Dockerfile and `evaluate.sh` SkyDiscover
 *   runs it with (hone calls its `evaluate(program_path)` directly, as that container's `evaluate.sh` does);
 * - `simpletes`: `init_program.*`, `evaluator.py` and the instruction in `<folder name>.txt`.
 */
export type TaskLayout = "openevolve" | "skydiscover" | "simpletes";

export interface FolderLayout {
  layout: TaskLayout;
  seedPath: string;
  evaluatorPath: string;
  /** The upstream config file read (config.yaml, config_phase_N.yaml, or the one named). */
  configPath?: string;
  /** When the config is one of several config_phase_N.yaml files: which one, and which exist. */
  phase?: { n: number; all: number[] };
  /** SimpleTES: the instruction file that describes the task. */
  descriptionPath?: string;
}

export const SEED_NAMES = [
  "initial_program.py",
  "initial_program.js",
  "initial_program.cpp",
  "initial_program.rs",
  "init_program.py",
  "init_program.cpp",
  "init_program.rs",
];
/**
 * A seed in another language than the names above (OpenEvolve's examples/r_robust_regression has `initial_program.r`,
 * with `file_suffix: ".r"` in its config: OpenEvolve takes any program file it is given).
 */
const OTHER_SEED = /^(?:initial|init)_program\.[A-Za-z0-9]{1,10}$/;
/** Files named so that are not programs: notes, compiled or backup copies. */
const NOT_A_SEED = /\.(?:md|rst|pyc|pyo|orig|bak|swp|log|lock)$/i;
const EVALUATOR_NAMES = ["evaluator.py", join("evaluator", "evaluator.py")];
const PHASE_FILE = /^config_phase_(\d{1,3})\.ya?ml$/;

const isFile = (p: string) => existsSync(p) && statSync(p).isFile();
const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** The phases a folder offers as config_phase_N.yaml files, in order. */
export function phasesOf(dir: string): number[] {
  if (!isDir(dir)) return [];
  const found = readdirSync(dir).flatMap((f) => {
    const m = PHASE_FILE.exec(f);
    return m ? [Number(m[1])] : [];
  });
  return [...new Set(found)].sort((a, b) => a - b);
}

function phaseFile(dir: string, n: number): string | undefined {
  return [`config_phase_${n}.yaml`, `config_phase_${n}.yml`].map((f) => join(dir, f)).find(isFile);
}

/**
 * The folder's seed program: the first of SEED_NAMES present, else its one `initial_program.<ext>` (or
 * `init_program.<ext>`) in another language. Several such files and none of SEED_NAMES is refused naming them.
 */
function findSeed(dir: string): string | undefined {
  const named = SEED_NAMES.map((n) => join(dir, n)).find(isFile);
  if (named || !isDir(dir)) return named;
  const other = readdirSync(dir)
    .filter((f) => OTHER_SEED.test(f) && !NOT_A_SEED.test(f) && isFile(join(dir, f)))
    .sort();
  if (other.length > 1)
    throw taskError(
      dir,
      undefined,
      `has several seed programs (${other.join(", ")}); hone evolves one: move the others out of the folder`,
    );
  return other[0] && join(dir, other[0]);
}

/**
 * The refusal of a folder with no seed program, saying what it has instead when it is one of the field's shapes hone
 * does not evolve: a program of several files (OpenEvolve's tsp_tour_minimization, `initial_program/`, run by its
 * own script) or a prompt (the prompt-optimization folders' `initial_prompt.txt`, scored by calling an LLM).
 */
function noSeed(dir: string): HoneError {
  const expected = `expected one of ${SEED_NAMES.join(", ")} (or initial_program.<ext> in another language)`;
  const folder = ["initial_program", "init_program"].find((n) => isDir(join(dir, n)));
  if (folder)
    return taskError(
      join(dir, folder),
      undefined,
      `is a folder: the seed is a program of several files, which hone does not evolve (it edits one program file); ${expected}`,
    );
  const prompt = isDir(dir) ? readdirSync(dir).find((f) => /^initial_prompt\.[A-Za-z0-9]+$/.test(f)) : undefined;
  if (prompt)
    return taskError(
      join(dir, prompt),
      undefined,
      `is a prompt to optimize, not a program: hone evolves programs, and this folder's evaluator scores prompts by calling a model; ${expected}`,
    );
  const inner = innerTaskFolders(dir);
  if (inner.length > 0)
    return taskError(
      dir,
      undefined,
      `has no seed program: it is a folder of task folders (${inner.slice(0, 5).join(", ")}${inner.length > 5 ? ", …" : ""}); name one of them as the task, or list them all with --tasks-dir ${dir}`,
    );
  return taskError(dir, undefined, `has no seed program; ${expected}`);
}

/** The task folders directly inside `dir` (OpenEvolve's algotune/, alphaevolve_math_problems/<problem>/), sorted. */
function innerTaskFolders(dir: string): string[] {
  if (!isDir(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .slice(0, 10_000)
    .filter((d) => d.isDirectory() && looksLikeTaskFolder(join(dir, d.name)))
    .map((d) => d.name)
    .sort();
}

/** Whether a folder holds a seed program and an evaluator in one of the known layouts (for registry scans). */
export function looksLikeTaskFolder(dir: string): boolean {
  let seed: string | undefined;
  try {
    seed = findSeed(dir);
  } catch {
    seed = dir; // several seeds: a task folder all the same, refused with the reason when it is loaded
  }
  return seed !== undefined && EVALUATOR_NAMES.some((n) => isFile(join(dir, n)));
}

/** A container-only evaluator (SkyDiscover's Docker or Harbor layouts with no Python evaluate()). */
function containerOnly(dir: string): string | undefined {
  const ev = join(dir, "evaluator");
  if (isFile(join(ev, "Dockerfile")) || isFile(join(ev, "evaluate.sh"))) return join(ev, "Dockerfile");
  if (isFile(join(dir, "environment", "Dockerfile")) && isFile(join(dir, "tests", "test.sh")))
    return join(dir, "environment", "Dockerfile");
  return undefined;
}

/**
 * The refusal of a folder whose evaluator runs only in a container, or undefined when it is not one. `script`: the
 * Python file beside the container that defines no evaluate() (SkyDiscover's `evaluator/evaluator.py` with only a
 * `main()`, which the container's evaluate.sh runs), when there is one.
 */
export function containerRefusal(dir: string, script?: string): HoneError | undefined {
  const container = containerOnly(dir);
  if (!container) return undefined;
  const what = script
    ? `a container whose ${relative(dir, script)} defines no evaluate(program_path) (it is the container's entry point)`
    : "a container with no Python evaluator";
  return taskError(
    container,
    undefined,
    `this task's evaluator is ${what}: it needs Docker, which hone does not drive. hone calls evaluate(program_path) from evaluator.py or evaluator/evaluator.py; add one that scores the program as the container does`,
  );
}

function findEvaluator(dir: string, named?: string): string {
  if (named) {
    if (!isFile(named)) throw taskError(named, undefined, "is not a file: the named evaluator does not exist");
    return named;
  }
  const found = EVALUATOR_NAMES.map((n) => join(dir, n)).find(isFile);
  if (found) return found;
  const refusal = containerRefusal(dir);
  if (refusal) throw refusal;
  throw taskError(dir, undefined, "has no evaluator.py (nor evaluator/evaluator.py) defining evaluate(program_path)");
}

/** The SimpleTES instruction: `<folder name>.txt`, else the folder's only .txt file that is not a requirements list. */
function findInstruction(dir: string): string | undefined {
  const own = join(dir, `${basename(dir)}.txt`);
  if (isFile(own)) return own;
  const txt = readdirSync(dir).filter((f) => f.endsWith(".txt") && !/^requirements/i.test(f));
  return txt.length === 1 ? join(dir, txt[0] as string) : undefined;
}

function findConfig(dir: string, opts: LayoutOptions): { configPath?: string; phase?: FolderLayout["phase"] } {
  const all = phasesOf(dir);
  if (opts.phase !== undefined) {
    const file = phaseFile(dir, opts.phase);
    if (!file)
      throw taskError(
        dir,
        "--phase",
        all.length > 0
          ? `has no config_phase_${opts.phase}.yaml; its phases are ${all.join(", ")}`
          : "has no config_phase_N.yaml files to choose a phase from",
      );
    return { configPath: file, phase: { n: opts.phase, all } };
  }
  if (opts.config) {
    if (!isFile(opts.config)) throw taskError(opts.config, undefined, "is not a file: the named config does not exist");
    const m = PHASE_FILE.exec(basename(opts.config));
    return { configPath: opts.config, phase: m ? { n: Number(m[1]), all } : undefined };
  }
  const plain = ["config.yaml", "config.yml"].map((f) => join(dir, f)).find(isFile);
  if (plain) return { configPath: plain };
  const first = all[0];
  if (first !== undefined) return { configPath: phaseFile(dir, first), phase: { n: first, all } };
  return {};
}

export interface LayoutOptions {
  /** An upstream config file to read instead of the default one (OpenEvolve's `--config`). */
  config?: string;
  /** Read config_phase_N.yaml. */
  phase?: number;
  /** A seed program or evaluator named by a manifest, instead of the layout's own. */
  seed?: string;
  evaluator?: string;
}

function inside(dir: string, file: string, what: string): void {
  const rel = relative(dir, file);
  if (rel.startsWith("..") || resolve(dir, rel) !== file)
    throw taskError(file, undefined, `the ${what} must lie inside the task folder ${dir}, which is all its evaluator sees`);
}

/** Whether `path` is `folder` or lies under it (both as given: resolve links first where they matter). */
export function isUnder(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** Where `file` really lies when a symbolic link takes it out of the folder `dir`; undefined when it stays inside. */
export function linkedOutOf(dir: string, file: string): string | undefined {
  const real = realpathSync(file);
  return isUnder(realpathSync(dir), real) ? undefined : real;
}

/**
 * A seed, config or description linked out of its folder is refused: read through the link, a file of this machine (a
 * key, a password file) would go to the model as the program to improve or the task to solve. (An evaluator linked
 * out is checked once hone.yaml says which other folders its sandbox sees: discovery-task.ts.)
 */
function checkLinkedText(dir: string, path: string | undefined, what: string): void {
  const real = path === undefined ? undefined : linkedOutOf(dir, path);
  if (path !== undefined && real !== undefined)
    throw taskError(
      path,
      undefined,
      `is a link to ${real}, outside the task folder ${dir}: the ${what} must lie inside it (its text is shown to the model, so hone reads no ${what} from elsewhere); copy the file into the folder instead of linking it`,
    );
}

/** Finds the seed, evaluator, config and description of a task folder in any of the known layouts. */
export function detectLayout(dir: string, opts: LayoutOptions = {}): FolderLayout {
  const seedPath = opts.seed ?? findSeed(dir);
  if (!seedPath) throw noSeed(dir);
  if (!isFile(seedPath)) throw taskError(seedPath, undefined, "is not a file: the named seed program does not exist");
  const evaluatorPath = findEvaluator(dir, opts.evaluator);
  for (const [file, what] of [
    [seedPath, "seed program"],
    [evaluatorPath, "evaluator"],
  ] as const)
    inside(dir, file, what);
  checkLinkedText(dir, seedPath, "seed program");
  const config = findConfig(dir, opts);
  checkLinkedText(dir, config.configPath, "config");
  const subfolder = dirname(evaluatorPath) !== dir;
  const simple = basename(seedPath).startsWith("init_program.") && !config.configPath;
  const layout: TaskLayout = subfolder ? "skydiscover" : simple ? "simpletes" : "openevolve";
  const descriptionPath = layout === "simpletes" || !config.configPath ? findInstruction(dir) : undefined;
  checkLinkedText(dir, descriptionPath, "task description");
  return { layout, seedPath, evaluatorPath, ...config, descriptionPath };
}

/**
 * The seed program's text. One that is not UTF-8 is refused naming the first bad byte: read as UTF-8 it would be
 * another program (each bad byte a U+FFFD), scored and evolved in place of the file; OpenEvolve cannot read it either.
 */
export function readSeedText(seedPath: string): string {
  const bytes = readFileSync(seedPath);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const at = firstBadByte(bytes);
    throw taskError(
      seedPath,
      undefined,
      `is not UTF-8 text: byte 0x${(bytes[at] ?? 0).toString(16).padStart(2, "0")} at byte offset ${at} (line ${lineAt(bytes, at)}) is not valid UTF-8; save the seed program as UTF-8`,
    );
  }
}

const lineAt = (bytes: Buffer, offset: number) => bytes.subarray(0, offset).filter((b) => b === 0x0a).length + 1;

/** Whether the first `n` bytes are UTF-8; with `open`, a sequence cut short at their end counts as UTF-8. */
function utf8Prefix(bytes: Buffer, n: number, open: boolean): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes.subarray(0, n), { stream: open });
    return true;
  } catch {
    return false;
  }
}

/** Offset of the first byte of the first sequence that is not UTF-8 (the longest valid prefix found by halving). */
function firstBadByte(bytes: Buffer): number {
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (utf8Prefix(bytes, mid, true)) lo = mid;
    else hi = mid - 1;
  }
  if (utf8Prefix(bytes, lo, false)) return lo;
  // The prefix ends inside a sequence that the next byte breaks: the sequence's lead byte is the bad one.
  for (let i = lo - 1; i >= Math.max(0, lo - 3); i--) if ((bytes[i] as number) >= 0xc0) return i;
  return lo;
}
