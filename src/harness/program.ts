import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import * as z from "zod";
import { harnessError } from "../errors.ts";
import { nearestName } from "../nearest-name.ts";
import { oneLine } from "../printable.ts";
import { contentHash, listFiles } from "./files.ts";
import { packageIssues } from "./issues.ts";
import type { Harness } from "./types.ts";

/**
 * A harness given as a program (HarnessGrad's contract): a folder with `harness.json` whose entrypoint hone runs as
 * `ENTRY --task task.json --workdir DIR`, in any language. The model comes from OPENAI_BASE_URL / HONE_MODEL /
 * OPENAI_API_KEY; a QA answer is left in DIR/answer.txt, a discovery program in DIR (the task's file name).
 */
export interface ProgramHarness {
  kind: "program";
  dir: string;
  name: string;
  version: string;
  /** The entrypoint's words (split on spaces; no shell). */
  entrypoint: string[];
  /**
   * HarnessGrad's `install`: the harness's dependencies (a pip requirements file or a setup script in its folder),
   * installed by a person before a run, never on the run path. hone does not run it either (`programNotes` says so).
   */
  install?: string;
  /** Fields of harness.json hone does not read (HarnessGrad's `path`, `backend`, `env_kinds`, or a misspelling). */
  ignored: string[];
  timeoutSec: number;
  contentHash: string;
}

const MAX_MANIFEST = 64 << 10;

const manifestSchema = z
  .object({
    $schema: z.string().optional(),
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "use letters, digits, '.', '_' and '-' (at most 64)"),
    version: z.string().min(1).max(64).default("0.0.0"),
    entrypoint: z.string().min(1).max(1000).regex(/\S/, "is blank; write the command to run"),
    install: z.string().min(1).max(1000).optional(),
    timeout: z.number().positive().max(86_400).default(600),
    description: z.string().max(4000).optional(),
  })
  .passthrough();

/** The fields hone reads; HarnessGrad's own harness.json files also hold the others below, which hone leaves. */
const FIELDS = Object.keys(manifestSchema.shape);
const HARNESSGRAD_FIELDS = ["path", "backend", "env_kinds"];

const words = (s: string) => s.trim().split(/\s+/).filter(Boolean);

/**
 * The entrypoint's words. HarnessGrad's harness.json names a Python file (`"entrypoint": "agent.py"`) that its
 * platform runs as `python <entry>`; run as a command, a bare name is looked up on PATH and was not found (exit 127,
 * no message). A lone bare `.py` name (no `/`) of a file in the folder (a symlink to one too) runs the same way, with
 * python3. A path such as `./agent.py` is a command already: it runs under its own shebang (a virtualenv's Python,
 * `uv run --script`), as before.
 */
function entryWords(dir: string, entrypoint: string): string[] {
  const entry = words(entrypoint);
  const [only] = entry;
  if (entry.length !== 1 || only === undefined || only.includes("/") || !only.endsWith(".py")) return entry;
  return isFile(join(dir, only)) ? ["python3", only] : entry;
}

/** Whether `path` is a file, following symlinks (false for a broken or looping one). */
function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}

/** Whether a folder holds a harness: a package (agent.yaml) or a harness program (harness.json). */
export function isHarnessFolder(dir: string): boolean {
  return existsSync(join(dir, "agent.yaml")) || existsSync(join(dir, "harness.json"));
}

/** Whether a folder is a harness program (it has harness.json and no agent.yaml). */
export function isProgramHarness(dir: string): boolean {
  return existsSync(join(dir, "harness.json")) && !existsSync(join(dir, "agent.yaml"));
}

/** Loads and checks `harness.json`; every problem names the file and the field. */
export function loadProgramHarness(dirArg: string): ProgramHarness {
  const dir = resolve(dirArg);
  const file = join(dir, "harness.json");
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile())
    throw harnessError(file, undefined, "is missing or not a regular file (a harness program needs harness.json)");
  if (st.size > MAX_MANIFEST) throw harnessError(file, undefined, `is larger than ${MAX_MANIFEST} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw harnessError(file, undefined, `is not valid JSON: ${(err as Error).message}`);
  }
  const r = manifestSchema.safeParse(raw);
  if (!r.success) {
    const issues = packageIssues(r.error.issues, raw, "a harness.json field");
    throw harnessError(file, issues[0]?.field, issues.map((i) => `${i.field}: ${i.message}`).join("; "));
  }
  if (r.data.entrypoint.includes("\0")) throw harnessError(file, "entrypoint", "contains a NUL byte");
  return {
    kind: "program",
    dir,
    name: r.data.name,
    version: r.data.version,
    entrypoint: entryWords(dir, r.data.entrypoint),
    install: r.data.install,
    ignored: Object.keys(r.data).filter((k) => !FIELDS.includes(k)),
    timeoutSec: r.data.timeout,
    contentHash: contentHash(dir),
  };
}

/**
 * What `hone harness check` says of a harness program beyond its problems: an `install` step hone never runs (the
 * program runs with the Python and packages already there), and fields of harness.json hone does not read.
 */
export function programNotes(p: ProgramHarness): string[] {
  const notes: string[] = [];
  if (p.install)
    notes.push(
      `harness.json (install): "${oneLine(p.install.slice(0, 200))}" is not run by hone: install what it names where the entrypoint's interpreter finds it before the run (the program runs sealed, with no network)`,
    );
  for (const k of p.ignored.slice(0, 20)) {
    const near = nearestName(k, FIELDS);
    const why = HARNESSGRAD_FIELDS.includes(k)
      ? "HarnessGrad's field; hone does not read it"
      : `not a field hone reads, ignored${near ? ` (did you mean "${near}"?)` : ""}`;
    notes.push(`harness.json (${oneLine(k.slice(0, 100))}): ${why}`);
  }
  if (p.ignored.length > 20) notes.push(`harness.json: ${p.ignored.length - 20} more fields hone does not read`);
  return notes;
}

/**
 * A harness program as the Harness every loader returns: no prompt, tools, skills or middleware of hone's, its files
 * and content hash, its time limit, and `program` set, so the loops that run package harnesses (optimize, eval,
 * train, the runners and workers) run it unchanged and the rollout or QA task runs the program instead of the agent
 * loop. A spec cannot change it (applySpec refuses: it has no agent.yaml); methods that write folders can.
 */
export function programAsHarness(p: ProgramHarness): Harness {
  return {
    dir: p.dir,
    name: p.name,
    systemPrompt: "",
    maxIterations: 0,
    timeoutSec: p.timeoutSec,
    sampling: {},
    defaults: {},
    tools: [],
    skills: [],
    middlewares: [],
    stopTools: [],
    contentHash: p.contentHash,
    files: listFiles(p.dir),
    program: p,
  };
}
