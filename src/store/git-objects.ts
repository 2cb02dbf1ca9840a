// Git's loose objects, written and read in-process with node's zlib: a blob, tree or commit is
// `<type> <size>\0<content>`, named by the SHA-1 of those bytes and stored deflated under objects/<2 hex>/<38 hex>.
// Written the way git writes them (a temporary file, then a rename), so a run killed mid-write never leaves a
// truncated object behind that a later write would skip as already present. The bytes are git's own, so ids match
// every git implementation. Only loose objects are read here: one that git packed reads as absent (git.ts then asks
// the git CLI), and one whose bytes do not hash to its name is refused.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { deflateSync, inflateSync } from "node:zlib";
import { readRegular } from "./git-safe.ts";

export type ObjectType = "blob" | "tree" | "commit";

/** One entry of a tree: a file (100644, 100755), a symbolic link (120000) or a folder (40000). */
export interface TreeEntry {
  mode: "100644" | "100755" | "120000" | "40000";
  name: string;
  oid: string;
}

export interface Signature {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  timestamp: number;
}

/** Writes one object (unless present) and returns its id. */
export function writeObject(gitDir: string, type: ObjectType, content: Uint8Array): string {
  const wrapped = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
  const oid = createHash("sha1").update(wrapped).digest("hex");
  const path = join(gitDir, "objects", oid.slice(0, 2), oid.slice(2));
  if (existsSync(path)) return oid;
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `tmp_obj_${randomBytes(6).toString("hex")}`);
  writeFileSync(tmp, deflateSync(wrapped));
  renameSync(tmp, path);
  return oid;
}

/** Git's limit on what hone reads back: harness files are text of at most a few MB (the packages' own limits). */
const MAX_OBJECT_BYTES = 64 << 20;

/** One loose object's type and content, or undefined when it is not a loose object of this repository. */
export function readObject(gitDir: string, oid: string): { type: string; content: Buffer } | undefined {
  if (!/^[0-9a-f]{40}$/.test(oid)) return undefined;
  // Only a regular file, never blocking: an object of a run folder from someone else may be a FIFO or a link.
  const path = join(gitDir, "objects", oid.slice(0, 2), oid.slice(2));
  const deflated = readRegular(path, MAX_OBJECT_BYTES);
  if (!deflated) {
    // Not there (packed, or absent), or there but something git would block on or read through: never given to git.
    if (lstatSync(path, { throwIfNoEntry: false })) throw new Error(`git object ${oid} is not a regular file`);
    return undefined;
  }
  let wrapped: Buffer;
  try {
    wrapped = inflateSync(deflated, { maxOutputLength: MAX_OBJECT_BYTES });
  } catch {
    return undefined;
  }
  const nul = wrapped.indexOf(0);
  const m = /^(blob|tree|commit|tag) (\d+)$/.exec(wrapped.subarray(0, Math.max(0, nul)).toString("latin1"));
  if (!m || Number(m[2]) !== wrapped.length - nul - 1) return undefined;
  if (createHash("sha1").update(wrapped).digest("hex") !== oid) throw new Error(`git object ${oid} is corrupt`);
  return { type: m[1] as string, content: wrapped.subarray(nul + 1) };
}

/** A tree's entries, as treeContent() writes them. */
export function parseTree(content: Buffer): { mode: string; name: string; oid: string }[] {
  const entries = [];
  for (let at = 0; at < content.length; ) {
    const space = content.indexOf(0x20, at);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new Error("a git tree is malformed");
    entries.push({
      mode: content.subarray(at, space).toString("latin1"),
      name: content.subarray(space + 1, nul).toString("utf8"),
      oid: content.subarray(nul + 1, nul + 21).toString("hex"),
    });
    at = nul + 21;
  }
  return entries;
}

/** A commit's tree and parents (its header lines up to the first blank line). */
export function parseCommit(content: Buffer): { tree: string; parents: string[] } {
  const head = content.toString("utf8").split("\n\n", 1)[0] ?? "";
  const field = (name: string) => head.split("\n").flatMap((l) => (l.startsWith(`${name} `) ? [l.slice(name.length + 1)] : []));
  const tree = field("tree")[0];
  if (!tree) throw new Error("a git commit has no tree");
  return { tree, parents: field("parent") };
}

// Git orders a tree's entries by the bytes of their names (UTF-8, not UTF-16 code units), a folder's name as if it
// ended in "/".
const sortName = (e: TreeEntry) => Buffer.from(e.mode === "40000" ? `${e.name}/` : e.name, "utf8");

/** A tree's content: its entries in git's order, each `<mode> <name>\0<20-byte id>`. */
export function treeContent(entries: readonly TreeEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(sortName(a), sortName(b)));
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`, "utf8"), Buffer.from(e.oid, "hex")]));
}

const who = (s: Signature) => `${s.name} <${s.email}> ${s.timestamp} +0000`;

/** A commit's content, its message with git's newlines (no CR, none leading, exactly one at the end). */
export function commitContent(tree: string, parents: readonly string[], author: Signature, message: string): Buffer {
  const text = `${message.replace(/\r/g, "").replace(/^\n+/, "").replace(/\n+$/, "")}\n`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${who(author)}`, `committer ${who(author)}`];
  return Buffer.from(`${lines.join("\n")}\n\n${text}`, "utf8");
}
