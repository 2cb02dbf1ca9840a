// Git's loose objects, written in-process with node's zlib: a blob, tree or commit is `<type> <size>\0<content>`,
// named by the SHA-1 of those bytes and stored deflated under objects/<2 hex>/<38 hex>. Written the way git writes
// them (a temporary file, then a rename), so a run killed mid-write never leaves a truncated object behind that a
// later write would skip as already present. The bytes are git's own, so ids match every git implementation.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { deflateSync } from "node:zlib";

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
