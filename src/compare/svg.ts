import type { BandPoint } from "./curve.ts";

/** One method's best-so-far band on a chart: the mean as a step line, the seeds' lowest to highest as a shaded band. */
export interface ChartSeries {
  label: string;
  color: string;
  band: BandPoint[];
  /** Where the cell stopped on the x-axis: the last step is drawn out to here. */
  end: number;
  /** Drawn dashed: a cell that may not be compared with the others on this chart (its identity differs). */
  apart?: boolean;
}

/** The chart's drawing size (its viewBox) and font size: a wide and a narrow variant keep the text legible. */
export interface ChartFrame {
  width: number;
  height: number;
  font: number;
  variant: string;
}
export const WIDE: ChartFrame = { width: 960, height: 320, font: 12, variant: "wide" };
export const NARROW: ChartFrame = { width: 440, height: 330, font: 14, variant: "narrow" };

export const escapeXml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

/**
 * About `count` round tick values (1, 2 or 5 times a power of ten) covering [lo, hi]. Each is computed from its index
 * (never by adding steps: a step below the resolution of lo, as for scores near 1e16 or 1e9 a hair apart, would never
 * move the sum), at most a few times `count`, duplicates removed.
 */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  if (!(hi > lo)) return [lo];
  // Halves keep the span finite for any two finite values (1e308 and −1e308).
  const span = hi - lo;
  const raw = Number.isFinite(span) ? span / count : (hi / 2 - lo / 2) / (count / 2);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * power).find((s) => s >= raw) as number;
  const first = Math.ceil(lo / step);
  const n = Math.min(Math.floor(hi / step - first + 1e-9), 4 * count);
  const out = new Set<number>();
  for (let i = 0; i <= n; i++) {
    const v = Number(((first + i) * step).toPrecision(12));
    if (Number.isFinite(v) && v >= lo - step * 1e-9 && v <= hi + step * 1e-9) out.add(v);
  }
  return [...out];
}

const label = (v: number) => (Math.abs(v) >= 1e4 ? v.toExponential(1) : Number(v.toPrecision(4)).toString());

/** The sum of two finite values, held within the doubles (a padded axis end past ±1.8e308). */
const clampSum = (a: number, b: number) => Math.min(Number.MAX_VALUE, Math.max(-Number.MAX_VALUE, a + b));

function domain(series: readonly ChartSeries[], size: number): { x: [number, number]; y: [number, number] } {
  const xs = series.flatMap((s) => [s.end, ...s.band.map((p) => p.x)]);
  const ys = series.flatMap((s) => s.band.flatMap((p) => [p.min, p.max]));
  const xHi = Math.max(size, ...xs);
  let lo = Math.min(...ys);
  let hi = Math.max(...ys);
  if (!(hi > lo)) {
    const pad = Math.abs(lo) * 0.1 || 0.5;
    lo = clampSum(lo, -pad);
    hi = clampSum(hi, pad);
  }
  // (hi − lo)·0.06 as halves: the span of two scores far apart (±1e308) is past what a double holds.
  const pad = (hi / 2 - lo / 2) * 0.12;
  return { x: [0, xHi > 0 ? xHi : 1], y: [clampSum(lo, -pad), clampSum(hi, pad)] };
}

/** Where v lies between lo and hi, 0 to 1, computed in halves where the span overflows. */
export function fraction(v: number, lo: number, hi: number): number {
  const span = hi - lo;
  return Number.isFinite(span) ? (v - lo) / span : (v / 2 - lo / 2) / (hi / 2 - lo / 2);
}

/** Points of a step function through (x_i, v_i), held to `end`. */
function steps(band: readonly BandPoint[], value: (p: BandPoint) => number, end: number): [number, number][] {
  const out: [number, number][] = [];
  band.forEach((p, i) => {
    if (i > 0) out.push([p.x, value(band[i - 1] as BandPoint)]);
    out.push([p.x, value(p)]);
  });
  const last = band[band.length - 1];
  if (last && end > last.x) out.push([end, value(last)]);
  return out;
}

/**
 * An inline SVG chart of best-so-far bands on the budget's x-axis: no script, no external reference, scaled by its
 * viewBox. Each mean point carries a <title> (x, mean, seeds, range) for a reader who hovers.
 */
export function curveChart(
  series: readonly ChartSeries[],
  o: { unit: string; size: number; yLabel: string; frame?: ChartFrame },
): string {
  const drawn = series.filter((s) => s.band.length > 0);
  if (drawn.length === 0) return "";
  const f = o.frame ?? WIDE;
  const [W, H] = [f.width, f.height];
  const M = { left: 5.2 * f.font, right: 1.4 * f.font, top: f.font, bottom: 3.8 * f.font };
  const d = domain(drawn, o.size);
  const X = (x: number) => M.left + fraction(x, d.x[0], d.x[1]) * (W - M.left - M.right);
  const Y = (y: number) => H - M.bottom - fraction(y, d.y[0], d.y[1]) * (H - M.top - M.bottom);
  const pts = (ps: [number, number][]) => ps.map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(" ");
  const grid = [
    ...niceTicks(d.y[0], d.y[1]).map(
      (v) =>
        `<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}"/><text class="tick" x="${M.left - 6}" y="${(Y(v) + f.font / 3).toFixed(1)}" text-anchor="end">${label(v)}</text>`,
    ),
    ...niceTicks(d.x[0], d.x[1]).map(
      (v) =>
        `<line class="tickmark" x1="${X(v).toFixed(1)}" x2="${X(v).toFixed(1)}" y1="${H - M.bottom}" y2="${H - M.bottom + 5}"/><text class="tick" x="${X(v).toFixed(1)}" y="${H - M.bottom + 1.5 * f.font}" text-anchor="middle">${label(v)}</text>`,
    ),
  ];
  const body = drawn.map((s) => {
    const upper = steps(s.band, (p) => p.max, s.end);
    const lower = steps(s.band, (p) => p.min, s.end).reverse();
    const dots = s.band
      .map(
        (p) =>
          `<circle cx="${X(p.x).toFixed(1)}" cy="${Y(p.mean).toFixed(1)}" r="3"><title>${escapeXml(s.label)}: ${label(p.x)} ${escapeXml(o.unit)}, best so far ${label(p.mean)} (mean of ${p.n} seeds, ${label(p.min)}–${label(p.max)})</title></circle>`,
      )
      .join("");
    return `<g class="series${s.apart ? " apart" : ""}" data-testid="series" data-method="${escapeXml(s.label)}" data-points="${s.band.length}" style="color:${s.color}"><polygon class="band" points="${pts([...upper, ...lower])}"/><polyline class="mean" points="${pts(steps(s.band, (p) => p.mean, s.end))}"/>${dots}</g>`;
  });
  return `<svg class="chart ${f.variant}" data-testid="chart" data-variant="${f.variant}" viewBox="0 0 ${W} ${H}" font-size="${f.font}" role="img" aria-label="best so far by ${escapeXml(o.unit)}" xmlns="http://www.w3.org/2000/svg">${grid.join("")}<line class="axis" x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}"/><line class="axis" x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}"/>${body.join("")}<text class="axis-label" x="${(M.left + W - M.right) / 2}" y="${H - f.font * 0.6}" text-anchor="middle">${escapeXml(o.unit)} (budget ${label(o.size)})</text><text class="axis-label" transform="translate(${f.font * 1.2} ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">${escapeXml(o.yLabel)}</text></svg>`;
}
