import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as z from "zod";
import { HoneError, zodIssues } from "../errors.ts";
import { startModelProxy } from "../model/proxy.ts";
import type { ChatModel } from "../model/types.ts";
import { nearestName } from "../nearest-name.ts";
import { oneLine } from "../printable.ts";
import { readUntrusted } from "../runtime/program-harness.ts";
import { modelBaseUrl, modelPort, runSealed } from "../task/sealed-command.ts";
import { traceEvents } from "./methods/traces.ts";

/**
 * Bring your own method: a folder with `method.json` ({"name", "entrypoint", "timeout"?}) whose entrypoint hone
 * runs once per proposal step, in that folder, sealed (runSealed: no network but the proposer's model proxy, no
 * secret, a time limit), with one JSON request on stdin:
 *
 *   {"round", "proposals", "archive_dir", "output_dir", "proposer": {"base_url", "model"}, "budget": {...}}
 *
 * `archive_dir` holds `candidates.jsonl` (one line per measured candidate: id, parent, score, valid, per-task
 * scores), `candidates/<id>/` (that candidate's harness files) and `traces/<id>/trajectory.jsonl` (what its rollouts
 * did, cleaned as methods/traces.ts says; `trajectory-1.jsonl`… for more than one). The program writes each proposal as a complete
 * harness folder `output_dir/<name>/` with a `proposal.json` ({"parent": <candidate id>, "rationale"}); what it
 * writes then goes through the same gate as every candidate. The proposer's key never reaches it:
 * OPENAI_API_KEY is the proxy's one-run token.
 */
export interface ExternalMethod {
  name: string;
  dir: string;
  entrypoint: string[];
  timeoutSec: number;
}

export interface ArchiveRecord {
  id: string;
  parent: string | null;
  score: number | null;
  valid: boolean;
  per_task?: Record<string, number | null>;
  /** The candidate's harness folder, copied into the archive for the program to read. */
  dir: string;
  /** Its measurement's trajectory files, written cleaned under traces/<id>/. */
  trajectories?: readonly string[];
}

export interface ExternalProposal {
  name: string;
  /** The folder the program wrote, copied out of its output folder (a fresh copy only hone can write). */
  dir: string;
  parent: string;
  rationale?: string;
}

export interface ExternalStepRequest {
  round: number;
  proposals: number;
  budget: Record<string, number>;
}

const manifestSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "use letters, digits, '.', '_' and '-'"),
  entrypoint: z.string().min(1).max(1000).regex(/\S/, "is blank; write the command to run"),
  timeout: z.number().positive().max(86_400).default(600),
});

/** The fields method.json may hold (README, "Bring your own method"). */
const MANIFEST_FIELDS = Object.keys(manifestSchema.shape);

/**
 * Refuses a field method.json does not have (a misspelled `timout` was silently ignored and the default used),
 * naming each, the field it most likely meant, and the fields there are.
 */
function refuseUnknownFields(file: string, raw: unknown): void {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return;
  const unknown = Object.keys(raw).filter((k) => !MANIFEST_FIELDS.includes(k));
  if (unknown.length === 0) return;
  const said = unknown.slice(0, 10).map((k) => {
    const near = nearestName(k, MANIFEST_FIELDS);
    return `${oneLine(k.slice(0, 100))}: is not a method.json field${near ? ` (did you mean "${near}"?)` : ""}`;
  });
  if (unknown.length > 10) said.push(`and ${unknown.length - 10} more fields it does not have`);
  throw new HoneError("badConfig", `${said.join("; ")}; method.json holds ${MANIFEST_FIELDS.join(", ")}`, {
    file,
    field: oneLine((unknown[0] ?? "").slice(0, 100)),
  });
}

const proposalSchema = z.object({ parent: z.string().min(1).max(200), rationale: z.string().max(4000).optional() }).passthrough();

/** The largest method.json read. */
const MAX_MANIFEST = 64 << 10;

/** The most a proposal folder may hold: files, bytes, depth (a program that floods its output is refused). */
const LIMITS = { files: 200, bytes: 4 << 20, depth: 8 };

export function loadExternalMethod(dirArg: string): ExternalMethod {
  const dir = resolve(dirArg);
  const file = join(dir, "method.json");
  if (!existsSync(file)) throw new HoneError("usage", `${dir} has no method.json; a method given as a program needs one`);
  // A method folder is not trusted: method.json is read only as a regular file of bounded size (a FIFO or a device
  // would block or flood hone before the program is even sealed).
  const st = statSync(file);
  if (!st.isFile()) throw new HoneError("badConfig", "not a regular file", { file });
  if (st.size > MAX_MANIFEST) throw new HoneError("badConfig", `larger than ${MAX_MANIFEST >> 10} KiB`, { file });
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new HoneError("badConfig", `${file}: not valid JSON: ${(err as Error).message}`);
  }
  refuseUnknownFields(file, raw);
  const r = manifestSchema.safeParse(raw);
  if (!r.success) {
    const issues = zodIssues(r.error.issues);
    throw new HoneError("badConfig", issues.map((i) => `${i.field}: ${i.message}`).join("; "), { file, field: issues[0]?.field });
  }
  if (r.data.entrypoint.includes("\0")) throw new HoneError("badConfig", "contains a NUL byte", { file, field: "entrypoint" });
  return { name: r.data.name, dir, entrypoint: r.data.entrypoint.trim().split(/\s+/), timeoutSec: r.data.timeout };
}

const jsonl = (rows: readonly unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join("");

/** traces/<id>/: each of a candidate's trajectories, cleaned (the task's message and evaluator metrics dropped). */
function writeTraces(archiveDir: string, r: ArchiveRecord): void {
  const files = r.trajectories ?? [];
  if (files.length === 0) return;
  const dir = join(archiveDir, "traces", r.id);
  mkdirSync(dir, { recursive: true });
  for (const [i, t] of files.entries())
    writeFileSync(join(dir, i ? `trajectory-${i}.jsonl` : "trajectory.jsonl"), jsonl(traceEvents(t)));
}

/** Writes the archive folder the program reads: candidates.jsonl, each candidate's files and its traces. */
export function writeArchive(archiveDir: string, records: readonly ArchiveRecord[]): void {
  mkdirSync(join(archiveDir, "candidates"), { recursive: true });
  writeFileSync(join(archiveDir, "candidates.jsonl"), jsonl(records.map(({ dir: _d, trajectories: _t, ...r }) => r)));
  for (const r of records) {
    cpSync(r.dir, join(archiveDir, "candidates", r.id), { recursive: true, dereference: false });
    writeTraces(archiveDir, r);
  }
}

/**
 * Checks a folder the program wrote without trusting it: no links, bounded files, bytes and depth. The walk stops at
 * the first limit passed, so a folder flooded with files costs no more than the limit to refuse.
 */
function folderProblems(dir: string): string[] {
  const problems: string[] = [];
  let files = 0;
  let bytes = 0;
  const over = () => files > LIMITS.files || bytes > LIMITS.bytes;
  const walk = (d: string, depth: number): void => {
    if (depth > LIMITS.depth) {
      problems.push(`${d}: nested deeper than ${LIMITS.depth} folders`);
      return;
    }
    for (const name of readdirSync(d)) {
      if (over()) return;
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) problems.push(`${p}: a symbolic link (not allowed in a proposal)`);
      else if (st.isDirectory()) walk(p, depth + 1);
      else if (st.isFile()) {
        files++;
        bytes += st.size;
      } else problems.push(`${p}: not a regular file or folder`);
    }
  };
  walk(dir, 0);
  if (files > LIMITS.files) problems.push(`${dir}: more than ${LIMITS.files} files`);
  if (bytes > LIMITS.bytes) problems.push(`${dir}: more than ${LIMITS.bytes} bytes (${LIMITS.bytes >> 20} MiB)`);
  return problems;
}

/**
 * Reads the proposal folders of the program's output in the order of their names, up to `max` taken ones; refused
 * ones come back with their reasons, and folders past the `max`-th taken one as over, neither checked nor copied (a
 * program that writes 10,000 folders costs what `max` of them cost).
 */
export function readProposals(
  outputDir: string,
  into: string,
  known: ReadonlySet<string>,
  max = Number.POSITIVE_INFINITY,
): { proposals: ExternalProposal[]; refused: string[] } {
  const proposals: ExternalProposal[] = [];
  const refused: string[] = [];
  for (const name of readdirSync(outputDir).sort()) {
    if (proposals.length >= max) {
      refused.push(`${name}: over the ${max} proposal(s) asked for`);
      continue;
    }
    const src = join(outputDir, name);
    const st = lstatSync(src);
    if (!st.isDirectory() || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
      refused.push(`${name}: not a proposal folder (a folder named with letters, digits, '.', '_', '-')`);
      continue;
    }
    const problems = folderProblems(src);
    const text = readUntrusted(join(src, "proposal.json"), 64 << 10);
    let meta: z.infer<typeof proposalSchema> | undefined;
    let parsed: unknown;
    try {
      parsed = text === undefined ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined) problems.push(`${name}/proposal.json: missing, not a regular file, or not JSON`);
    else {
      const r = proposalSchema.safeParse(parsed);
      if (r.success) meta = r.data;
      else
        problems.push(
          `${name}/proposal.json: ${zodIssues(r.error.issues)
            .map((i) => `${i.field}: ${i.message}`)
            .join("; ")}`,
        );
    }
    if (meta && !known.has(meta.parent))
      problems.push(`${name}/proposal.json: parent ${meta.parent} is not a candidate of the archive`);
    if (problems.length || !meta) {
      refused.push(...problems.map((p) => p.replace(`${outputDir}/`, "")));
      continue;
    }
    const dir = join(into, name);
    cpSync(src, dir, { recursive: true });
    rmSync(join(dir, "proposal.json"), { force: true });
    proposals.push({ name, dir, parent: meta.parent, rationale: meta.rationale });
  }
  // Every refusal names what the program chose (a folder's or a file's name, the parent it wrote): printed by `hone
  // log` and kept in the records, so as one printable line (an ESC or a newline in a name cannot drive a terminal).
  return { proposals, refused: refused.map(oneLine) };
}

/**
 * One proposal step of an external method: writes the archive, runs the program sealed with the request on its
 * stdin, and reads back what it proposed (copied into `into`). The program's own failures (a crash, a timeout)
 * are errors naming the program and the end of its stderr.
 */
export async function runExternalStep(
  method: ExternalMethod,
  request: ExternalStepRequest,
  archive: readonly ArchiveRecord[],
  proposer: { model: ChatModel; modelId: string },
  into: string,
): Promise<{ proposals: ExternalProposal[]; refused: string[]; stderr: string }> {
  const base = mkdtempSync(join(tmpdir(), "hone-method-"));
  const archiveDir = join(base, "archive");
  const outputDir = join(base, "output");
  mkdirSync(outputDir);
  writeArchive(archiveDir, archive);
  const proxy = await startModelProxy(proposer.model, proposer.modelId);
  const port = await modelPort();
  try {
    const body = {
      round: request.round,
      proposals: request.proposals,
      archive_dir: archiveDir,
      output_dir: outputDir,
      proposer: { base_url: modelBaseUrl(port), model: proposer.modelId },
      budget: request.budget,
    };
    const proc = await runSealed({
      argv: method.entrypoint,
      readOnly: [method.dir, archiveDir],
      writable: [outputDir],
      cwd: method.dir,
      env: { HONE_MODEL: proposer.modelId, OPENAI_API_KEY: proxy.token, HOME: outputDir, TMPDIR: outputDir },
      timeoutMs: method.timeoutSec * 1000,
      modelSocketDir: proxy.socketDir,
      modelPort: port,
      input: JSON.stringify(body),
    });
    // The end of what the program wrote, as one printable line: it reaches the terminal and the records.
    const tail = oneLine(proc.stderr.trim().split("\n").slice(-3).join(" | ").slice(-2000));
    if (proc.timedOut)
      throw new HoneError("runFailed", `the method ${method.name} did not finish its step within ${method.timeoutSec} s`);
    if (proc.code !== 0) throw new HoneError("runFailed", `the method ${method.name} exited with code ${proc.code}: ${tail}`);
    mkdirSync(into, { recursive: true });
    return { ...readProposals(outputDir, into, new Set(archive.map((a) => a.id)), request.proposals), stderr: proc.stderr };
  } finally {
    await proxy.close();
    rmSync(base, { recursive: true, force: true });
  }
}
