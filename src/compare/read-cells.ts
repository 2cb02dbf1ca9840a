import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { HoneError, zodIssues } from "../errors.ts";
import { oneLine, printableText } from "../printable.ts";
import { type CellRecord, cellRecordSchema } from "./cell.ts";
import { cellName, seedDir } from "./plan.ts";

/** A cell record with the file it came from. */
export type LoadedCell = CellRecord & { file: string };

/** A cell × seed whose last attempt failed (its cell-failed.json): no result, never a score. */
export interface CellFailure {
  /** `<cell>/seed-<n>`. */
  dir: string;
  error: string;
  failed: string;
}

export interface CellFolder {
  folder: string;
  cells: LoadedCell[];
  /** `<cell>/seed-<n>` folders without a cell.json yet (running, stopped or not started)… */
  pending: string[];
  /** …and those whose last attempt failed, with the error. */
  failed: CellFailure[];
}

export const CELL_FILE = "cell.json";
/** What the runner leaves in a cell × seed's folder when its attempt fails; removed when it is tried again. */
export const CELL_FAILED_FILE = "cell-failed.json";
const MAX_ERROR = 4000;
const MAX_BYTES = 32 << 20;
const SEED_DIR = /^seed-(0|[1-9][0-9]{0,9})$/;
// `<benchmark>+<harness>+<method>`, each a grid label (experiment.ts): any other folder is not a cell's, and its name
// (which could hold a terminal's control sequences) is never printed.
const LABEL = "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}";
const CELL_DIR = new RegExp(`^${LABEL}\\+${LABEL}\\+${LABEL}$`);

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
  const failed: CellFailure[] = [];
  for (const cell of entries(folder).filter((c) => CELL_DIR.test(c)))
    for (const seed of entries(join(folder, cell)).filter((s) => SEED_DIR.test(s))) {
      const file = join(folder, cell, seed, CELL_FILE);
      const st = lstatSync(file, { throwIfNoEntry: false });
      if (st) cells.push(readCellFile(file, st.isFile() ? st.size : -1, cell, seed));
      else {
        const failure = readFailure(join(folder, cell, seed), `${cell}/${seed}`);
        if (failure) failed.push(failure);
        else pending.push(`${cell}/${seed}`);
      }
    }
  if (cells.length + pending.length + failed.length === 0)
    throw new HoneError("usage", `${folderArg} holds no cell records (<cell>/seed-<n>/${CELL_FILE})`);
  return { folder, cells, pending, failed };
}

/**
 * A seed folder's failure record, if it has a readable one. Whatever it holds is only shown as text (cut to 4000
 * characters), its control characters written as \uXXXX (its lines kept; the time on one line), so a terminal shows
 * them and never obeys them; one that is not a regular file or not the runner's shape counts as no record (the folder
 * is pending).
 */
function readFailure(seedFolder: string, dir: string): CellFailure | undefined {
  const file = join(seedFolder, CELL_FAILED_FILE);
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > MAX_BYTES) return undefined;
  try {
    const raw = JSON.parse(readFileSync(file, "utf8")) as { error?: unknown; failed?: unknown };
    if (typeof raw.error !== "string") return undefined;
    const failed = typeof raw.failed === "string" ? oneLine(raw.failed.slice(0, 40)) : "";
    return { dir, error: printableText(raw.error.slice(0, MAX_ERROR)), failed };
  } catch {
    return undefined;
  }
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
