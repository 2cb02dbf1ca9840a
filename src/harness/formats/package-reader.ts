import { isUtf8 } from "node:buffer";
import { lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { isMap, isNode, isScalar, parseDocument } from "yaml";
import { oneLine } from "../spec.ts";
import { parseStrictYaml, yamlProblem } from "../yaml-cache.ts";

/** One reason a package cannot be read or converted: the file, the field where there is one, and what to do. */
export interface FormatProblem {
  file: string;
  field?: string;
  message: string;
}

/** A package's files are at most this large, and a package has at most this many (untrusted input). */
export const MAX_FILE_BYTES = 1024 * 1024;
export const MAX_FILES = 500;
const MAX_DEPTH = 12;

const inside = (root: string, path: string) => path === root || path.startsWith(root + sep);

/**
 * Reads a package folder that came from elsewhere, collecting every problem instead of stopping at the first:
 * files must be regular files inside the package (no symbolic link leading out), at most MAX_FILE_BYTES, text
 * files UTF-8. Problems name the file by its absolute path; notes are what the conversion did that a user
 * should know.
 */
export class PackageReader {
  readonly dir: string;
  readonly problems: FormatProblem[] = [];
  readonly notes: string[] = [];
  private readonly root: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
    this.root = realpathSync(this.dir);
  }

  // A package's names and values reach the user's terminal in these texts: control characters are written out
  // (\u001b), so a file named with an ESC sequence or a middleware import holding one cannot drive the terminal.
  problem(rel: string, field: string | undefined, message: string): void {
    const f = field ? { field: oneLine(field) } : {};
    this.problems.push({ file: oneLine(join(this.dir, rel)), ...f, message: oneLine(message) });
  }

  note(raw: string): void {
    const text = oneLine(raw);
    if (!this.notes.includes(text)) this.notes.push(text);
  }

  /** A path the package names (`./tools/x.yaml`), as a clean relative path; undefined (and a problem) if it leaves. */
  relPath(path: string, from: string, field: string): string | undefined {
    const full = resolve(this.dir, path);
    const rel = relative(this.dir, full).split(sep).join("/");
    if (rel === "" || rel.startsWith("..") || resolve(rel) === rel) {
      this.problem(from, field, `"${path}" points outside the package; name a file inside it`);
      return undefined;
    }
    return rel;
  }

  /** The file's bytes, or undefined with a problem naming `from` and `field` (the place that named the file). */
  bytes(rel: string, from = rel, field?: string): Buffer | undefined {
    const full = join(this.dir, rel);
    let real: string;
    try {
      real = realpathSync(full);
    } catch {
      this.problem(from, field, `${rel} does not exist`);
      return undefined;
    }
    if (!inside(this.root, real)) {
      this.problem(rel, undefined, `is a symbolic link to ${real}, outside the package; put the file itself in the package`);
      return undefined;
    }
    const st = lstatSync(real);
    if (!st.isFile()) {
      this.problem(from, field, `${rel} is not a regular file`);
      return undefined;
    }
    if (st.size > MAX_FILE_BYTES) {
      this.problem(rel, undefined, `is ${st.size} bytes; a package's files are at most ${MAX_FILE_BYTES} bytes`);
      return undefined;
    }
    return readFileSync(real);
  }

  text(rel: string, from = rel, field?: string): string | undefined {
    const b = this.bytes(rel, from, field);
    if (!b) return undefined;
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(b);
    } catch {
      this.problem(rel, undefined, "is not UTF-8 text; save it as UTF-8");
      return undefined;
    }
  }

  /** A YAML file parsed (aliases capped by the library), or undefined with a problem. */
  yaml(rel: string, from = rel, field?: string): unknown {
    const text = this.text(rel, from, field);
    if (text === undefined) return undefined;
    try {
      return parseStrictYaml(text) ?? {};
    } catch (err) {
      this.problem(rel, undefined, yamlProblem(err));
      return undefined;
    }
  }

  /** Every file of the package as relative paths (sorted; .git skipped), capped in number and depth. */
  files(): string[] {
    const out: string[] = [];
    const walk = (d: string, depth: number) => {
      if (depth > MAX_DEPTH) {
        this.problem(relative(this.dir, d), undefined, `is nested more than ${MAX_DEPTH} folders deep`);
        return;
      }
      for (const e of readdirSync(d, { withFileTypes: true, encoding: "buffer" })) {
        const name = e.name.toString("utf8");
        if (name === ".git" || name === "__pycache__") continue;
        const p = join(d, name);
        // Node's string paths lose a name's bytes that are not UTF-8, and no package text could name such a file.
        if (!isUtf8(e.name)) {
          this.problem(
            relative(this.dir, p),
            undefined,
            `its name is not UTF-8 (bytes ${e.name.toString("hex")}); rename it or remove it`,
          );
          continue;
        }
        if (e.isDirectory()) walk(p, depth + 1);
        else if (e.isFile() || e.isSymbolicLink()) out.push(relative(this.dir, p).split(sep).join("/"));
        if (out.length > MAX_FILES) return;
      }
    };
    walk(this.dir, 0);
    if (out.length > MAX_FILES) {
      this.problem(".", undefined, `holds more than ${MAX_FILES} files; a harness package is a few dozen`);
      return out.slice(0, MAX_FILES);
    }
    return out.sort();
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Structural equality of JSON-like values (key order ignored); values nested past 200 levels count as different. */
export function sameValue(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (depth > 200) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameValue(x, b[i], depth + 1));
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameValue(a[k], b[k], depth + 1));
}

/**
 * `text` (YAML whose value is `before`) edited to hold `after`, changing only the nodes whose values differ, so
 * comments, key order and layout of everything unchanged stay as they were.
 */
export function patchYaml(text: string, before: unknown, after: unknown): string {
  const doc = parseDocument(text);
  const patch = (path: (string | number)[], a: unknown, b: unknown) => {
    if (sameValue(a, b)) return;
    if (isRecord(a) && isRecord(b) && path.length < 8) {
      for (const k of Object.keys(a)) if (b[k] === undefined) doc.deleteIn([...path, k]);
      for (const [k, v] of Object.entries(b)) if (v !== undefined) patch([...path, k], a[k], v);
    } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length && path.length < 8) {
      b.forEach((v, i) => {
        patch([...path, i], a[i], v);
      });
    } else if (path.length === 0) {
      doc.contents = doc.createNode(b) as typeof doc.contents;
    } else doc.setIn(path, doc.createNode(b));
  };
  if (sameValue(before, after)) return text;
  patch([], before, after);
  return keepUnchangedPairs(text, doc.toString({ lineWidth: 110, flowCollectionPadding: false }));
}

/** Each top-level `key: value` of a YAML text, by key: its value and where its text lies. */
function topLevelPairs(text: string): Map<string, { value: unknown; from: number; to: number }> {
  const pairs = new Map<string, { value: unknown; from: number; to: number }>();
  const doc = parseDocument(text);
  if (!isMap(doc.contents)) return pairs;
  for (const item of doc.contents.items) {
    const key = isScalar(item.key) ? item.key : undefined;
    const end = isNode(item.value) ? item.value.range?.[2] : key?.range?.[2];
    if (typeof key?.value !== "string" || !key.range || end === undefined) continue;
    pairs.set(key.value, { value: isNode(item.value) ? item.value.toJS(doc) : null, from: key.range[0], to: end });
  }
  return pairs;
}

/**
 * `patched` with each top-level pair whose value did not change written as `original` wrote it: yaml's rendering
 * of a whole document folds long scalars anew (a `>-` description wrapped at another width), so a section nobody
 * changed would otherwise come back with other bytes.
 */
function keepUnchangedPairs(original: string, patched: string): string {
  const before = topLevelPairs(original);
  const after = [...topLevelPairs(patched)].sort((a, b) => b[1].from - a[1].from);
  let out = patched;
  for (const [key, now] of after) {
    const was = before.get(key);
    if (was && sameValue(was.value, now.value))
      out = out.slice(0, now.from) + original.slice(was.from, was.to) + out.slice(now.to);
  }
  return out;
}
