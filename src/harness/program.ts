import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import * as z from "zod";
import { harnessError } from "../errors.ts";
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
  /** Words of an optional install step, run once in the harness's own work copy. */
  install?: string[];
  timeoutSec: number;
  contentHash: string;
}

const MAX_MANIFEST = 64 << 10;

const manifestSchema = z
  .object({
    $schema: z.string().optional(),
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "use letters, digits, '.', '_' and '-' (at most 64)"),
    version: z.string().min(1).max(64).default("0.0.0"),
    entrypoint: z.string().min(1).max(1000),
    install: z.string().min(1).max(1000).optional(),
    timeout: z.number().positive().max(86_400).default(600),
    description: z.string().max(4000).optional(),
  })
  .passthrough();

const words = (s: string) => s.trim().split(/\s+/).filter(Boolean);

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
  const entry = words(r.data.entrypoint);
  if (entry.some((w) => w.includes("\0"))) throw harnessError(file, "entrypoint", "contains a NUL byte");
  return {
    kind: "program",
    dir,
    name: r.data.name,
    version: r.data.version,
    entrypoint: entry,
    install: r.data.install ? words(r.data.install) : undefined,
    timeoutSec: r.data.timeout,
    contentHash: contentHash(dir),
  };
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
