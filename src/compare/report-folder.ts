import { lstatSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { HoneError } from "../errors.ts";
import { writeFileAtomic } from "../store/atomic.ts";
import { reportHtml } from "./html.ts";
import type { IntervalKind } from "./intervals.ts";
import { cellName, seedDir } from "./plan.ts";
import { readCellFolder } from "./read-cells.ts";
import { buildReport, type CompareReport } from "./report.ts";

export interface FolderReportOptions {
  /** Default: the baseline the experiment was run with (its experiment.json), else `random`. */
  baseline?: string;
  interval?: IntervalKind;
  /** Where report.html goes (default: `<folder>/report.html`). */
  html?: string;
}

/** What an experiment folder's experiment.json says, where it says it: the baseline and the planned cell × seed folders. */
interface ManifestView {
  baseline?: string;
  planned: string[];
}

// A planned entry as the runner writes it (`<benchmark>+<harness>+<method>/seed-<n>`); anything else is ignored.
const PLANNED =
  /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\+[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\+[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\/seed-(0|[1-9][0-9]{0,9})$/;
const MAX_PLANNED = 1_000_000;

function readManifest(dir: string): ManifestView {
  const file = join(dir, "experiment.json");
  // A regular file of a manifest's size: a FIFO put there would hold the report for ever.
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > 16 << 20) return { planned: [] };
  try {
    const m = JSON.parse(readFileSync(file, "utf8")) as { baseline?: unknown; planned?: unknown };
    const planned = Array.isArray(m.planned)
      ? m.planned.slice(0, MAX_PLANNED).filter((p): p is string => typeof p === "string" && PLANNED.test(p))
      : [];
    const baseline = typeof m.baseline === "string" && m.baseline.length > 0 ? m.baseline : undefined;
    return { ...(baseline ? { baseline } : {}), planned };
  } catch {
    return { planned: [] };
  }
}

/** The baseline an experiment folder was run with (its experiment.json), if it says. */
export const manifestBaseline = (dir: string): string | undefined => readManifest(dir).baseline;

/**
 * The cell × seed runs with no result: the seed folders without a record, and the planned ones never started (the
 * grid stopped before them: a cell failed, or it was killed), which have no folder at all; in the plan's order.
 */
function unfinishedRuns(found: readonly string[], planned: readonly string[], done: ReadonlySet<string>): string[] {
  const seen = new Set(found);
  const notStarted = planned.filter((p) => !done.has(p) && !seen.has(p));
  return [...found, ...notStarted];
}

/** Reads an experiment folder's cell records, builds the report and writes its HTML page (atomically). */
export function reportFolder(folder: string, o: FolderReportOptions = {}): { report: CompareReport; html: string } {
  const { cells, pending: found, failed, folder: dir } = readCellFolder(folder);
  const manifest = readManifest(dir);
  const baseline = o.baseline ?? manifest.baseline ?? "random";
  const done = new Set([
    ...cells.map((c) => `${cellName(c.benchmark, c.harness, c.method)}/${seedDir(c.seed)}`),
    ...failed.map((f) => f.dir),
  ]);
  const pending = unfinishedRuns(found, manifest.planned, done);
  // A method whose seeds all failed or are still running is still the grid's: a baseline without a result yet.
  const unfinished = [...pending, ...failed.map((f) => f.dir)].map((d) => d.split("/")[0]?.split("+")[2] ?? "");
  const methods = [...new Set([...cells.map((c) => c.method), ...unfinished.filter(Boolean)])].sort();
  // With no record yet, only a baseline asked for by name is checked (a folder without experiment.json knows too little).
  if ((cells.length > 0 || (o.baseline !== undefined && methods.length > 0)) && !methods.includes(baseline))
    throw new HoneError(
      "usage",
      `no cell of the baseline method "${baseline}" in ${folder}; its methods are ${methods.join(", ")} (choose one with --baseline)`,
    );
  const report = buildReport(cells, { baseline, interval: o.interval, pending, failed });
  const html = o.html ?? join(dir, "report.html");
  // A folder in the page's place cannot be replaced by a file: said as the user's to mend, never "an internal error".
  if (lstatSync(html, { throwIfNoEntry: false })?.isDirectory())
    throw new HoneError(
      "usage",
      o.html
        ? `--html ${o.html} is a folder: give the page's file name (e.g. ${join(o.html, "report.html")})`
        : `${html} is a folder, where the report page goes: remove it, or give --html <file>`,
    );
  writeFileAtomic(html, reportHtml(report, { title: `hone compare: ${basename(dir)}` }));
  return { report, html };
}
