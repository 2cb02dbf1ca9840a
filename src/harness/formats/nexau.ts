import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { HoneError } from "../../errors.ts";
import { contentHash, listPackageFiles } from "../files.ts";
import type { Harness, MiddlewareConfig, ToolSpec } from "../types.ts";
import { parseYamlCached } from "../yaml-cache.ts";
import { cordisRefusal, otherAgentConfigHint } from "./cordis.ts";
import { type Conversion, nexauToHone } from "./nexau-import.ts";
import { INERT_KEYS, REFUSED_KEYS } from "./nexau-layout.ts";
import { isRecord, MAX_FILE_BYTES } from "./package-reader.ts";

// NexAU packages (and HarnessTTT's, which use NexAU's layout) in hone: recognised by their agent.yaml, read onto a
// hone Harness, written as hone packages (import) and written back from hone packages (export, nexau-export.ts).

const MODULE_REF = /^[A-Za-z_][\w.]*:[A-Za-z_]\w*$/;
/** Top-level keys only NexAU's agent.yaml has (a typo in a hone package is hone's error, not a NexAU package). */
const NEXAU_ONLY_KEYS = new Set([...Object.keys(INERT_KEYS), ...Object.keys(REFUSED_KEYS), "tool_call_mode"]);

/**
 * Whether agent.yaml is NexAU's rather than hone's: a tool bound to a Python `module:function` (not `hone:`), a
 * middleware imported as `module:Class` (or as a bare string), fixed tool arguments, or a top-level key only NexAU's
 * agent.yaml has (max_context_tokens, tool_call_mode, sandbox_config, tracers, …).
 */
export function isNexauPackage(agentFile: string): boolean {
  let raw: unknown;
  try {
    // Only a regular file inside the package is read: agent.yaml as a FIFO would block this read (and the process,
    // deaf to SIGTERM) forever, and a link to /dev/zero would fill memory. The package's loader then names the file.
    const real = realpathSync(agentFile);
    const root = realpathSync(dirname(agentFile));
    const st = lstatSync(real);
    if (!real.startsWith(root + sep) || !st.isFile() || st.size > MAX_FILE_BYTES) return false;
    raw = parseYamlCached(readFileSync(real, "utf8"));
  } catch {
    return false;
  }
  if (!isRecord(raw)) return false;
  if (Object.keys(raw).some((k) => NEXAU_ONLY_KEYS.has(k))) return true;
  const pythonRef = (v: unknown) => typeof v === "string" && !v.startsWith("hone:") && MODULE_REF.test(v);
  const tools = Array.isArray(raw.tools) ? raw.tools : [];
  const middlewares = Array.isArray(raw.middlewares) ? raw.middlewares : [];
  return (
    tools.some((t) => isRecord(t) && (pythonRef(t.binding) || t.extra_kwargs !== undefined)) ||
    middlewares.some((m) => typeof m === "string" || (isRecord(m) && pythonRef(m.import)))
  );
}

const where = (p: { file: string; field?: string }) => `${p.file}${p.field ? ` (${p.field})` : ""}`;

/** A NexAU package refused for every problem found in it (the first one's file and field are the error's). */
export class NexauRefused extends HoneError {
  readonly problems: { file: string; field?: string; message: string }[];
  constructor(problems: { file: string; field?: string; message: string }[]) {
    const [first, ...rest] = problems as [(typeof problems)[number], ...typeof problems];
    const more = rest.map((p) => `\n  ${where(p)}: ${p.message}`).join("");
    super("badHarness", `${first.message}${more}`, { file: first.file, field: first.field });
    this.problems = problems;
  }
}

/** Writes a conversion's files under `root`. */
export function writeFiles(root: string, files: Conversion["files"]): void {
  for (const [path, content] of files) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

type Load = (dir: string, opts: { generatedCode?: (dir: string, t: ToolSpec[], m: MiddlewareConfig[]) => void }) => Harness;

/**
 * Loads a NexAU package as a Harness: converted to a hone package in a private temporary folder, loaded by hone's
 * own loader (so the value is exactly what `hone harness import` then `loadHarness` gives), then pointed back at
 * the NexAU files: `dir`, the content hash and every file path name the package the user gave.
 */
export function loadNexauHarness(
  dirArg: string,
  opts: { generatedCode?: (dir: string, t: ToolSpec[], m: MiddlewareConfig[]) => void },
  load: Load,
): Harness {
  const dir = resolve(dirArg);
  const conv = nexauToHone(dir, false);
  if (conv.problems.length > 0) throw new NexauRefused(conv.problems);
  const tmp = mkdtempSync(join(tmpdir(), "hone-nexau-"));
  const back = (p: string) => {
    const rel = relative(tmp, p);
    return rel.startsWith("..") ? p : join(dir, conv.origin.get(rel) ?? rel);
  };
  const relocate = (tools: ToolSpec[]) => {
    for (const t of tools) t.file = back(t.file);
  };
  try {
    writeFiles(tmp, conv.files);
    const hook = opts.generatedCode;
    const h = load(tmp, {
      generatedCode: hook
        ? (_d, tools, mws) => {
            relocate(tools);
            hook(dir, tools, mws);
          }
        : undefined,
    });
    relocate(h.tools);
    for (const s of h.skills) s.file = back(s.file);
    const files = listPackageFiles(dir);
    return { ...h, dir, contentHash: contentHash(dir, files), files };
  } catch (err) {
    if (!(err instanceof HoneError)) throw err;
    const file = err.file ? back(err.file) : dir;
    // The message starts with the error's own file and field (HoneError puts them there): said once, not twice.
    const own = err.file ? `${err.file}${err.field ? ` (${err.field})` : ""}: ` : "";
    const message = own && err.message.startsWith(own) ? err.message.slice(own.length) : err.message;
    throw new HoneError(err.exit, message.split(tmp).join(dir), { file, field: err.field });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** What reading a NexAU package did that a user should know (parameters not applied, tools added, files kept). */
export function nexauNotes(dir: string): string[] {
  return nexauToHone(dir, false).notes;
}

const removeQuietly = (dir: string) => {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // nothing was made there (a file in its path)
  }
};

/** Writes `files` as the new folder `out`, all or nothing: built under a hidden name, then renamed. */
export function writePackage(outArg: string, files: Conversion["files"]): string {
  const out = resolve(outArg);
  if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0))
    throw new HoneError("usage", `${out} already exists and is not an empty folder; choose another --out`);
  const partial = join(dirname(out), `.${basename(out)}.partial-${process.pid}`);
  try {
    rmSync(partial, { recursive: true, force: true });
    writeFiles(partial, files);
    rmSync(out, { recursive: true, force: true });
    renameSync(partial, out);
  } catch (err) {
    removeQuietly(partial);
    const e = err as NodeJS.ErrnoException;
    // Named as the user gave it, not the hidden folder it was built in; a full disk stays the CLI's to report (exit 7).
    if (typeof e.code === "string" && /^E[A-Z]+$/.test(e.code) && e.code !== "ENOSPC" && e.code !== "EDQUOT")
      throw new HoneError("usage", `${out} cannot be written (${e.code}); choose another --out`);
    if (typeof e.path === "string") e.path = out;
    throw err;
  }
  return out;
}

/** `hone harness import`: a NexAU package as a new hone package at `out`; refused (nothing written) on any problem. */
export function importNexau(dirArg: string, out: string): { out: string; notes: string[] } {
  const dir = resolve(dirArg);
  const agentFile = join(dir, "agent.yaml");
  if (!existsSync(agentFile))
    throw new HoneError(
      "badHarness",
      `${dir} ${cordisRefusal(dir) ?? `has no agent.yaml; a NexAU package is a folder with agent.yaml, tools/ and skills/${otherAgentConfigHint(dir)}`}`,
    );
  if (!isNexauPackage(agentFile))
    throw new HoneError("usage", `${dir} is already a hone package (no NexAU bindings or middleware imports); use it as it is`);
  const conv = nexauToHone(dir);
  if (conv.problems.length > 0) throw new NexauRefused(conv.problems);
  return { out: writePackage(out, conv.files), notes: conv.notes };
}
