import { lstatSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { HoneError } from "../errors.ts";
import { writeFileAtomic } from "../store/atomic.ts";
import { reportHtml } from "./html.ts";
import type { IntervalKind } from "./intervals.ts";
import { readCellFolder } from "./read-cells.ts";
import { buildReport, type CompareReport } from "./report.ts";

export interface FolderReportOptions {
  /** Default: the baseline the experiment was run with (its experiment.json), else `random`. */
  baseline?: string;
  interval?: IntervalKind;
  /** Where report.html goes (default: `<folder>/report.html`). */
  html?: string;
}

/** The baseline an experiment folder was run with (its experiment.json), if it says. */
export function manifestBaseline(dir: string): string | undefined {
  const file = join(dir, "experiment.json");
  // A regular file of a manifest's size: a FIFO put there would hold the report for ever.
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > 1 << 20) return undefined;
  try {
    const m = JSON.parse(readFileSync(file, "utf8")) as { baseline?: unknown };
    return typeof m.baseline === "string" && m.baseline.length > 0 ? m.baseline : undefined;
  } catch {
    return undefined;
  }
}

/** Reads an experiment folder's cell records, builds the report and writes its HTML page (atomically). */
export function reportFolder(folder: string, o: FolderReportOptions = {}): { report: CompareReport; html: string } {
  const { cells, pending, failed, folder: dir } = readCellFolder(folder);
  const baseline = o.baseline ?? manifestBaseline(dir) ?? "random";
  // A method whose seeds all failed or are still running is still the grid's: a baseline without a result yet.
  const unfinished = [...pending, ...failed.map((f) => f.dir)].map((d) => d.split("/")[0]?.split("+")[2] ?? "");
  const methods = [...new Set([...cells.map((c) => c.method), ...unfinished.filter(Boolean)])].sort();
  if (cells.length > 0 && !methods.includes(baseline))
    throw new HoneError(
      "usage",
      `no cell of the baseline method "${baseline}" in ${folder}; its methods are ${methods.join(", ")} (choose one with --baseline)`,
    );
  const report = buildReport(cells, { baseline, interval: o.interval, pending, failed });
  const html = o.html ?? join(dir, "report.html");
  writeFileAtomic(html, reportHtml(report, { title: `hone compare: ${basename(dir)}` }));
  return { report, html };
}
