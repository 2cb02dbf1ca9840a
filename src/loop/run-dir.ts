// What every run directory shares: refusing a non-empty folder, a copy of the harness it measured, a time stamp.
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { HoneError } from "../errors.ts";
import { listFiles } from "../harness/files.ts";

export const stamp = () => new Date().toISOString().replace(/[:.]/g, "-").replace("T", "_").slice(0, 19);

export function refuseNonEmpty(dir: string, hint = "choose another --out"): void {
  if (existsSync(dir) && readdirSync(dir).some((f) => !f.startsWith("hone.db.new")))
    throw new HoneError("usage", `${dir} already exists and is not empty; ${hint}`);
}

/** Copies a harness package's files into the run directory, so the run is self-contained and replayable. */
export function snapshotHarness(src: string, dest: string): void {
  for (const f of listFiles(src)) {
    mkdirSync(dirname(join(dest, f)), { recursive: true });
    copyFileSync(join(src, f), join(dest, f));
  }
}
