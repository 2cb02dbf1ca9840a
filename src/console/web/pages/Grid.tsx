import { useLiveJson } from "../api.ts";
import { ErrorPage } from "../components/ErrorPage.tsx";
import { Status } from "../components/Status.tsx";
import { num } from "../format.ts";
import { Link, runUrl } from "../router.tsx";

// The shapes of /api/experiment (src/console/api-grid.ts over src/compare/report.ts), as far as this page reads them.
type Interval = [number, number] | null;
interface Cell {
  cell: string;
  benchmark: string;
  harness: string;
  method: string;
  seeds: number[];
  measured_seeds: number[];
  mean: number | null;
  ci95: Interval;
  gain: { mean: number | null; ci95: Interval };
  seed_harness: { mean: number | null };
  cost: Record<string, number>;
  /** `test`, or `test-heldout` (a test-only benchmark's test file without its search pool), and the scorer's metric. */
  test_split?: string;
  metric?: string;
  method_reported: { seed: number; split?: string; score: number }[];
}
interface Comparison {
  benchmark: string;
  harness: string;
  method: string;
  status: string;
  n: number;
  mean_difference: number | null;
  ci95: Interval;
  verdict: "better" | "worse" | null;
  reason?: string;
}
interface Experiment {
  id: string;
  name: string;
  baseline: string;
  budget: { unit: string; size: number };
  seeds: { dir: string; run: string; state: "finished" | "started" | "waiting" }[];
  report: { cells: Cell[]; comparisons: Comparison[] } | null;
  charts: {
    benchmark: string;
    harness: string;
    svg: string | null;
    series: { label: string; color: string; apart?: boolean }[];
  }[];
  error: string | null;
}

const fmt = (v: number | null | undefined) => (v === null || v === undefined ? "–" : v.toPrecision(4));
const ci = (v: Interval) => (v ? `[${fmt(v[0])}, ${fmt(v[1])}]` : "–");
const COST = ["proposer_calls", "proposer_tokens", "executor_tokens", "evaluator_calls", "seconds"];

/** The mean over seeds of what the method claims for its choice on train (null without a claim). */
function ownTrain(c: Cell): number | null {
  const xs = (c.method_reported ?? []).filter((m) => m.split === "train").map((m) => m.score);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

function verdict(c: Comparison): string {
  if (c.status !== "compared") return c.reason ?? c.status;
  if (c.verdict) return `${c.verdict} than the baseline`;
  return c.n < 2 ? "no verdict (fewer than two pairs)" : "no verdict (interval includes 0)";
}

function Group({ e, chart }: { e: Experiment; chart: Experiment["charts"][number] }) {
  const cells = (e.report?.cells ?? []).filter((c) => c.benchmark === chart.benchmark && c.harness === chart.harness);
  const comps = (e.report?.comparisons ?? []).filter((c) => c.benchmark === chart.benchmark && c.harness === chart.harness);
  return (
    <section data-testid="grid-group">
      <h2>
        {chart.benchmark} · {chart.harness}
      </h2>
      {cells[0]?.test_split && (
        <p className="muted" data-testid="grid-measured-on">
          measured by hone on {cells[0].test_split} · {cells[0].metric}
        </p>
      )}
      {chart.svg ? (
        // The SVG is built by hone's own report code (src/compare/svg.ts, every label escaped), not by a run.
        // biome-ignore lint/security/noDangerouslySetInnerHtml: hone's own escaped SVG
        <div className="grid-chart" dangerouslySetInnerHTML={{ __html: chart.svg }} />
      ) : (
        <p className="muted">No curve points measured yet.</p>
      )}
      <p className="legend">
        {chart.series.map((s) => (
          <span key={s.label}>
            <span className="swatch" style={{ background: s.color }} /> {s.label}
            {s.apart ? " (dashed: not comparable)" : ""}
          </span>
        ))}
        <span className="muted">line: mean over seeds of the best so far (measured by hone); band: lowest to highest seed</span>
      </p>
      <div className="table-wrap">
        <table className="grid" data-testid="grid-cells">
          <thead>
            <tr>
              <th>method</th>
              <th className="r">seeds</th>
              <th className="r">test</th>
              <th className="r">95% CI</th>
              <th className="r">seed harness</th>
              <th className="r">gain</th>
              <th className="r">95% CI</th>
              <th className="r" title="the method's own score of its choice on train (kept apart, never hone's)">
                method's own
              </th>
              {COST.map((k) => (
                <th key={k} className="r">
                  {k.replace("_", " ")}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {cells.map((c) => (
              <tr key={c.cell} data-testid="grid-cell">
                <td>{c.method}</td>
                <td className="r">
                  {c.measured_seeds.length}/{c.seeds.length}
                </td>
                <td className="r mono">{fmt(c.mean)}</td>
                <td className="r mono">{ci(c.ci95)}</td>
                <td className="r mono">{fmt(c.seed_harness.mean)}</td>
                <td className="r mono">{fmt(c.gain.mean)}</td>
                <td className="r mono">{ci(c.gain.ci95)}</td>
                <td className="r mono muted" data-testid="grid-method-reported">
                  {fmt(ownTrain(c))}
                </td>
                {COST.map((k) => (
                  <td key={k} className="r">
                    {num(Math.round((c.cost[k] ?? 0) * 10) / 10)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {comps.length > 0 && (
        <table className="grid" data-testid="grid-comparisons">
          <thead>
            <tr>
              <th>method</th>
              <th>verdict against {e.baseline}</th>
              <th className="r">pairs</th>
              <th className="r">difference</th>
              <th className="r">95% CI</th>
            </tr>
          </thead>
          <tbody>
            {comps.map((c) => (
              <tr key={c.method}>
                <td>{c.method}</td>
                <td className={c.verdict ?? ""}>{verdict(c)}</td>
                <td className="r">{c.status === "compared" ? c.n : "–"}</td>
                <td className="r mono">{fmt(c.mean_difference)}</td>
                <td className="r mono">{ci(c.ci95)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * One `hone compare` experiment, live: reloaded whenever the server's events say a cell × seed started, recorded or
 * finished (its cell.json, written after its run's last record, included).
 */
export function GridPage({ id }: { id: string }) {
  const q = encodeURIComponent(id);
  const { data: e, error } = useLiveJson<Experiment>(`/api/experiment?id=${q}`, `/api/experiment/events?id=${q}`);
  if (error) return <ErrorPage title="The experiment could not be read" message={error} />;
  if (!e) return <p className="muted">Loading the experiment…</p>;
  const done = e.seeds.filter((s) => s.state === "finished").length;
  return (
    <>
      <div className="titlebar">
        <h1>Grid {e.name}</h1>
        <span className="muted" data-testid="grid-progress">
          {done} of {e.seeds.length} cell × seed runs finished · budget {num(e.budget.size)} {e.budget.unit} per cell
        </span>
      </div>
      {e.error && <p className="error">{e.error}</p>}
      {e.charts.map((c) => (
        <Group key={`${c.benchmark}+${c.harness}`} e={e} chart={c} />
      ))}
      <section>
        <h2>Cell × seed runs</h2>
        <div className="table-wrap">
          <table className="grid" data-testid="grid-seeds">
            <tbody>
              {e.seeds.map((s) => (
                <tr key={s.dir}>
                  <td>{s.state === "waiting" ? s.dir : <Link to={runUrl(s.run)}>{s.dir}</Link>}</td>
                  <td>
                    <Status value={s.state} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </>
  );
}
