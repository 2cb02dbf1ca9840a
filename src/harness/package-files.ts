import { isUtf8 } from "node:buffer";
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { harnessError } from "../errors.ts";

/** Text files of a package (prompt, agent.yaml, skills, tool files, code) are at most this large. */
export const MAX_TEXT_BYTES = 1024 * 1024;

/** Byte offset of the first byte that does not start a valid UTF-8 sequence, or -1 if `b` is all UTF-8. */
export function invalidUtf8Offset(b: Uint8Array): number {
  if (isUtf8(b)) return -1;
  let i = 0;
  while (i < b.length) {
    const c = b[i] as number;
    if (c < 0x80) {
      i++;
      continue;
    }
    const need = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (need === 0 || i + need > b.length - 1) return i;
    const c1 = b[i + 1] as number;
    // Overlong forms, UTF-16 surrogates and code points above U+10FFFF are not UTF-8 (RFC 3629).
    if ((c === 0xe0 && c1 < 0xa0) || (c === 0xed && c1 > 0x9f) || (c === 0xf0 && c1 < 0x90) || (c === 0xf4 && c1 > 0x8f))
      return i;
    for (let k = 1; k <= need; k++) if (((b[i + k] as number) & 0xc0) !== 0x80) return i;
    i += need + 1;
  }
  return -1;
}

const inside = (root: string, path: string) => path === root || path.startsWith(root + sep);

/**
 * Reads a text file of the package at `dir`: it must be a regular file whose real path is inside the package (no
 * symbolic link leading out), at most MAX_TEXT_BYTES, and UTF-8. Errors name the file and, for bad text, the byte.
 */
export function readPackageText(dir: string, file: string): string {
  const name = relative(dir, file);
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    throw harnessError(file, undefined, "cannot be read (missing file, or a symbolic link to nothing)");
  }
  if (!inside(realpathSync(dir), real))
    throw harnessError(file, undefined, `is a symbolic link to ${real}, outside the package; put the file itself in the package`);
  const st = lstatSync(real);
  if (!st.isFile()) throw harnessError(file, undefined, `${name} is not a regular file`);
  if (st.size > MAX_TEXT_BYTES)
    throw harnessError(file, undefined, `is ${st.size} bytes; a package's text files are at most ${MAX_TEXT_BYTES} bytes`);
  const bytes = readFileSync(real);
  const bad = invalidUtf8Offset(bytes);
  if (bad >= 0)
    throw harnessError(
      file,
      undefined,
      `is not UTF-8 text: byte 0x${(bytes[bad] as number).toString(16).padStart(2, "0")} at byte offset ${bad} does not start a valid UTF-8 sequence; save the file as UTF-8`,
    );
  return bytes.toString("utf8");
}

/**
 * Every symbolic link in the package that leads out of it (or to nothing), and every file or folder whose name is not
 * UTF-8 (no path to it can be spelt in a package's text, and Node's string paths would lose its bytes), as a problem
 * naming it.
 */
export function escapingLinks(dir: string): { file: string; message: string }[] {
  const root = realpathSync(dir);
  const out: { file: string; message: string }[] = [];
  const walk = (d: string, depth: number) => {
    if (depth > 32) return;
    for (const e of readdirSync(d, { withFileTypes: true, encoding: "buffer" })) {
      const p = join(d, e.name.toString("utf8"));
      if (!isUtf8(e.name)) {
        out.push({ file: p, message: `its name is not UTF-8 (bytes ${e.name.toString("hex")}); rename it or remove it` });
        continue;
      }
      if (e.isDirectory()) {
        if (e.name.toString() !== ".git") walk(p, depth + 1);
        continue;
      }
      if (!e.isSymbolicLink()) continue;
      let real: string | undefined;
      try {
        real = realpathSync(p);
      } catch {
        real = undefined;
      }
      if (real === undefined)
        out.push({ file: p, message: `is a symbolic link to ${readlinkSync(p)}, which does not exist; remove it` });
      else if (!inside(root, real))
        out.push({
          file: p,
          message: `is a symbolic link to ${real}, outside the package; a package may only carry its own files`,
        });
    }
  };
  walk(dir, 0);
  return out;
}
