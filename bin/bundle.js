// Whether dist/ (scripts/build-cli.mjs, run by `npm ci`) still matches the sources: every bundled source file has
// the size and modification time it was built from. A checkout whose sources changed since runs through tsx.
import { readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = new URL("../", import.meta.url);

/**
 * The file URL of dist/<name>.js when it is built from the sources as they are now; else undefined.
 * `root` (a folder's file URL ending in /) is the checkout, hone's own unless a test gives another.
 */
export function freshBundle(name, root = ROOT) {
  if (process.env.HONE_FROM_SOURCE) return undefined;
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(new URL("dist/manifest.json", root), "utf8"));
  } catch {
    return undefined;
  }
  for (const [file, [size, mtimeMs]] of Object.entries(manifest.inputs ?? {})) {
    const s = statSync(fileURLToPath(new URL(file, root)), { throwIfNoEntry: false });
    if (!s || s.size !== size || s.mtimeMs !== mtimeMs) return undefined;
  }
  return new URL(`dist/${name}.js`, root).href;
}
