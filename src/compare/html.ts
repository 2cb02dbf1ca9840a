import type { PairedComparison } from "./paired.ts";
import type { CellSummary, CompareReport } from "./report.ts";
import { type ChartSeries, curveChart, escapeXml as esc, NARROW, WIDE } from "./svg.ts";
import { amount, num, reportNotes, verdictText } from "./text.ts";

const COLORS = ["#6b7280", "#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d"];

const STYLE = `
:root{color-scheme:light;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2937;background:#f8fafc}
body{margin:0}header,main{max-width:1200px;margin:0 auto;padding:0 20px}header{padding-top:20px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 10px}p.meta{margin:0;color:#4b5563}
section{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:16px;margin:16px 0}
.scroll{overflow-x:auto}table{border-collapse:collapse;white-space:nowrap;margin:10px 0;font-variant-numeric:tabular-nums}
th,td{padding:4px 9px;border-bottom:1px solid #e5e7eb;text-align:left}th{font-weight:600;color:#374151;background:#f9fafb;vertical-align:bottom}
td.n{text-align:right}tr.refused td{color:#9ca3af}.better{color:#047857;font-weight:600}.worse{color:#b91c1c;font-weight:600}
figure{margin:0}svg.chart{width:100%;height:auto;display:block}
svg.chart.narrow{display:none}@media (max-width:640px){svg.chart.wide{display:none}svg.chart.narrow{display:block}}
.grid{stroke:#eef0f3}.axis,.tickmark{stroke:#9ca3af}.tick,.axis-label{fill:#4b5563}.series.apart .mean{stroke-dasharray:6 4}
.series .band{fill:currentColor;fill-opacity:.14;stroke:none}.series .mean{fill:none;stroke:currentColor;stroke-width:2}
.series circle{fill:currentColor}figcaption{display:flex;flex-wrap:wrap;gap:6px 16px;font-size:13px;margin-top:6px}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
ul.notes{margin:0;padding-left:18px}.empty{color:#6b7280}`;

const td = (v: string, numeric = false) => `<td${numeric ? ' class="n"' : ""}>${esc(v)}</td>`;
const interval = (ci: [number, number] | null) => (ci ? `[${num(ci[0])}, ${num(ci[1])}]` : "-");

function cellRow(c: CellSummary): string {
  return `<tr data-testid="cell-row" data-cell="${esc(c.cell)}">${[
    td(c.method),
    td(`${c.measured_seeds.length}/${c.seeds.length}`, true),
    td(num(c.mean), true),
    td(interval(c.ci95), true),
    td(num(c.seed_harness.mean), true),
    td(num(c.gain.mean), true),
    td(interval(c.gain.ci95), true),
    ...(["proposer_calls", "proposer_tokens", "executor_tokens", "evaluator_calls", "seconds"] as const).map((k) =>
      td(amount(c.cost[k]), true),
    ),
  ].join("")}</tr>`;
}

function comparisonRow(c: PairedComparison): string {
  const cls = c.verdict ?? (c.status === "refused" ? "refused" : "");
  return `<tr data-testid="comparison-row" data-method="${esc(c.method)}" data-status="${c.status}" class="${cls === "refused" ? "refused" : ""}">${[
    td(c.method),
    `<td class="${c.verdict ?? ""}">${esc(verdictText(c))}</td>`,
    td(c.status === "compared" ? String(c.n) : "-", true),
    td(num(c.mean_difference), true),
    td(interval(c.ci95), true),
  ].join("")}</tr>`;
}

/** One benchmark × harness chart (a wide and a narrow SVG) and its series: what the page and hone view both draw. */
export function groupChart(
  cells: CellSummary[],
  comparisons: PairedComparison[],
): { svg: string | null; series: Omit<ChartSeries, "band" | "end">[] } {
  const first = cells[0] as CellSummary;
  const refused = new Set(comparisons.filter((c) => c.status === "refused").map((c) => c.method));
  const series: ChartSeries[] = cells.map((c, i) => ({
    label: c.method,
    color: COLORS[i % COLORS.length] as string,
    band: c.curve,
    end: c.cost[c.budget.unit as keyof CellSummary["cost"]] ?? 0,
    apart: refused.has(c.method),
  }));
  const o = {
    unit: first.budget.unit,
    size: first.budget.size,
    yLabel: `best so far (${first.curve_split}, ${first.direction})`,
  };
  const svg = series.some((s) => s.band.length > 0)
    ? curveChart(series, { ...o, frame: WIDE }) + curveChart(series, { ...o, frame: NARROW })
    : null;
  return { svg, series: series.map(({ band: _b, end: _e, ...rest }) => rest) };
}

function groupSection(cells: CellSummary[], comparisons: PairedComparison[], r: CompareReport): string {
  const first = cells[0] as CellSummary;
  const { svg, series } = groupChart(cells, comparisons);
  const legend = series
    .map(
      (s) =>
        `<span><span class="swatch" style="background:${s.color}"></span>${esc(s.label)}${s.apart ? ` (dashed: not comparable with ${esc(r.baseline)})` : ""}</span>`,
    )
    .join("");
  const chart = svg ?? `<p class="empty">No curve points measured.</p>`;
  const heads = (hs: string[]) => `<tr>${hs.map((h) => `<th>${esc(h).replace(" ", "<br>")}</th>`).join("")}</tr>`;
  return `<section data-testid="group" data-benchmark="${esc(first.benchmark)}" data-harness="${esc(first.harness)}">
<h2>${esc(first.benchmark)} · ${esc(first.harness)}</h2>
<p class="meta" data-testid="measured-on">measured by hone on ${esc(first.test_split)} · ${esc(first.metric)} (${esc(first.direction)})</p>
<figure>${chart}<figcaption>${legend}<span>line: mean over seeds of the best so far, measured by hone; band: lowest to highest seed</span></figcaption></figure>
<div class="scroll"><table data-testid="cells">${heads(["method", "seeds", "test", "95% CI", "seed harness", "gain", "95% CI", "proposer calls", "proposer tokens", "executor tokens", "evaluator calls", "seconds"])}${cells.map(cellRow).join("")}</table></div>
${comparisons.length ? `<div class="scroll"><table data-testid="comparisons">${heads(["method", "verdict", "pairs", `difference vs ${r.baseline}`, "95% CI"])}${comparisons.map(comparisonRow).join("")}</table></div>` : ""}
</section>`;
}

/**
 * The report as one self-contained HTML page: inline CSS and SVG, no script, and a Content-Security-Policy that
 * forbids every fetch, so it opens from disk with no server and no network.
 */
export function reportHtml(r: CompareReport, o: { title: string }): string {
  const groups = new Map<string, CellSummary[]>();
  for (const c of r.cells) groups.set(`${c.benchmark}\n${c.harness}`, [...(groups.get(`${c.benchmark}\n${c.harness}`) ?? []), c]);
  const sections = [...groups.values()].map((cells) => {
    const f = cells[0] as CellSummary;
    return groupSection(
      cells,
      r.comparisons.filter((c) => c.benchmark === f.benchmark && c.harness === f.harness),
      r,
    );
  });
  const notes = reportNotes(r);
  const budgets = [...new Set(r.cells.map((c) => `${c.budget.size} ${c.budget.unit}`))].join(" / ");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(o.title)}</title><style>${STYLE}</style></head>
<body><header><h1>${esc(o.title)}</h1>
<p class="meta">${r.cells.length} cells · budget ${esc(budgets || "(no cell finished yet)")} · test score of each method's final choice: mean over tasks, then over seeds, 95% Student t interval · differences against <b>${esc(r.baseline)}</b> per task and seed, ${r.interval === "t" ? "Student t" : "paired bootstrap"} 95% interval, positive is better, a verdict only where the interval excludes 0</p></header>
<main>${sections.join("\n")}
${notes.length ? `<section data-testid="notes"><h2>Notes</h2><ul class="notes">${notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul></section>` : ""}
</main></body></html>
`;
}
