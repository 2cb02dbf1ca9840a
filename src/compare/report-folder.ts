import { basename, join } from "node:path";
import { HoneError } from "../errors.ts";
import { writeFileAtomic } from "../store/atomic.ts";
import { reportHtml } from "./html.ts";
import type { IntervalKind } from "./intervals.ts";
import { readCellFolder } from "./read-cells.ts";
import { buildReport, type CompareReport } from "./report.ts";

export interface FolderReportOptions {
  baseline?: string;
  interval?: IntervalKind;
  /** Where report.html goes (default: `<folder>/report.html`). */
  html?: string;
}

/** Reads an experiment folder's cell records, builds the report and writes its HTML page (atomically). */
export function reportFolder(folder: string, o: FolderReportOptions = {}): { report: CompareReport; html: string } {
  const { cells, pending, folder: dir } = readCellFolder(folder);
  const baseline = o.baseline ?? "random";
  const methods = [...new Set(cells.map((c) => c.method))].sort();
  if (cells.length > 0 && !methods.includes(baseline))
    throw new HoneError(
      "usage",
      `no cell of the baseline method "${baseline}" in ${folder}; its methods are ${methods.join(", ")} (choose one with --baseline)`,
    );
  const report = buildReport(cells, { baseline, interval: o.interval, pending });
  const html = o.html ?? join(dir, "report.html");
  writeFileAtomic(html, reportHtml(report, { title: `hone compare: ${basename(dir)}` }));
  return { report, html };
}
