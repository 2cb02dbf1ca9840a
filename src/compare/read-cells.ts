import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { HoneError, zodIssues } from "../errors.ts";
import { type CellRecord, cellRecordSchema } from "./cell.ts";
import { cellName, seedDir } from "./plan.ts";

/** A cell record with the file it came from. */
export type LoadedCell = CellRecord & { file: string };

export interface CellFolder {
  folder: string;
  cells: LoadedCell[];
  /** `<cell>/seed-<n>` folders without a cell.json yet (running, stopped or not started). */
  pending: string[];
}

export const CELL_FILE = "cell.json";
const MAX_BYTES = 32 << 20;
const SEED_DIR = /^seed-(0|[1-9][0-9]{0,9})$/;

const entries = (dir: string) =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort();

/**
 * Reads every `<cell>/seed-<n>/cell.json` under an experiment's out folder. Symbolic links are not followed; a record
 * that is malformed, too large or filed under another cell's folder is an error naming the file and the field.
 */
export function readCellFolder(folderArg: string): CellFolder {
  const folder = resolve(folderArg);
  if (!lstatSync(folder, { throwIfNoEntry: false })?.isDirectory())
    throw new HoneError("usage", `${folderArg} is not a folder (give the experiment's out folder)`);
  const cells: LoadedCell[] = [];
  const pending: string[] = [];
  for (const cell of entries(folder))
    for (const seed of entries(join(folder, cell)).filter((s) => SEED_DIR.test(s))) {
      const file = join(folder, cell, seed, CELL_FILE);
      const st = lstatSync(file, { throwIfNoEntry: false });
      if (!st) pending.push(`${cell}/${seed}`);
      else cells.push(readCellFile(file, st.isFile() ? st.size : -1, cell, seed));
    }
  if (cells.length + pending.length === 0)
    throw new HoneError("usage", `${folderArg} holds no cell records (<cell>/seed-<n>/${CELL_FILE})`);
  return { folder, cells, pending };
}

function readCellFile(file: string, size: number, cell: string, seed: string): LoadedCell {
  const bad = (message: string, field?: string) => new HoneError("usage", message, { file, field });
  if (size < 0) throw bad("is not a regular file");
  if (size > MAX_BYTES) throw bad(`is larger than ${MAX_BYTES} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw bad(`is not valid JSON: ${(err as Error).message}`);
  }
  const r = cellRecordSchema.safeParse(raw);
  if (!r.success) {
    const first = zodIssues(r.error.issues)[0];
    throw bad(first?.message ?? "invalid", first?.field);
  }
  const rec = r.data;
  const expected = cellName(rec.benchmark, rec.harness, rec.method);
  if (expected !== cell) throw bad(`belongs in ${expected}/, not ${cell}/`, "benchmark");
  if (seedDir(rec.seed) !== seed) throw bad(`belongs in ${seedDir(rec.seed)}/, not ${seed}/`, "seed");
  return { ...rec, file };
}
