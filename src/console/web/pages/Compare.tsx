import { useMemo } from "react";
import type uPlot from "uplot";
import { useJson } from "../api.ts";
import { Chart } from "../components/Chart.tsx";
import { ErrorPage } from "../components/ErrorPage.tsx";
import { bestSoFarByRound, carried } from "../curve.ts";
import { score, str } from "../format.ts";
import { Link, runUrl } from "../router.tsx";
import type { Round } from "../types.ts";

interface Receipt {
  run: {
    kind: string;
    status: string;
    started: string;
    finished: string | null;
    summary: { best_score?: number; start_score?: number } | null;
  };
  task: { id: string; content?: string; metric?: string; direction?: string };
  scorer: { budget: { maxEvals: number; timeoutSec: number }; hone: string } | null;
  settings: Record<string, unknown>;
  models: {
    role: string;
    model: string;
    endpoint: string | null;
    dialect: string;
    calls: number;
    cache_hits: number;
    prompt_tokens: number;
    completion_tokens: number;
  }[];
  harnesses: { seed: string | null; candidates: number; by_status: Record<string, number> };
  measurements: { rollouts: number; evaluations: number; invalid_evaluations: number; rollout_seconds: number };
  failed: { what: string; why: string }[];
}

interface CompareData {
  runs: { id: string; rounds: Round[]; direction: "maximize" | "minimize"; receipt: Receipt }[];
  warnings: string[];
}

const COLOURS = ["#1f5fbf", "#d35400", "#2a9d5b", "#8e44ad", "#c0392b", "#16a085"];

export function ComparePage({ ids }: { ids: string[] }) {
  const { data, error } = useJson<CompareData>(`/api/compare?${ids.map((id) => `run=${encodeURIComponent(id)}`).join("&")}`);
  const chart = useMemo(() => {
    if (!data) return null;
    const curves = data.runs.map((r) => bestSoFarByRound(r.rounds, r.direction));
    const xs = [...new Set(curves.flatMap((c) => [...c.keys()]))].sort((a, b) => a - b);
    const aligned: uPlot.AlignedData = [xs, ...curves.map((c) => xs.map((x) => c.get(x) ?? null))];
    return { aligned, points: curves.reduce((a, c) => a + c.size, 0) };
  }, [data]);
  if (ids.length < 2)
    return <ErrorPage title="Nothing to compare" message="Pick at least two runs on the runs page to compare them." />;
  if (error) return <ErrorPage title="These runs cannot be compared" message={error} />;
  if (!data || !chart) return <p className="muted">Loading…</p>;
  const rows: [string, (r: Receipt) => string][] = [
    ["status", (r) => `${r.run.status} (${r.run.kind})`],
    ["best / start", (r) => `${r.run.summary?.best_score?.toFixed(5) ?? "–"} / ${r.run.summary?.start_score?.toFixed(5) ?? "–"}`],
    ["task", (r) => `${r.task.id}${r.task.content ? ` (${r.task.content.slice(0, 12)})` : ""}`],
    ["metric", (r) => `${r.task.metric ?? "–"} ${r.task.direction ?? ""}`],
    ["budget", (r) => (r.scorer ? `${r.scorer.budget.maxEvals} evaluations, ${r.scorer.budget.timeoutSec} s each` : "–")],
    ["hone", (r) => r.scorer?.hone ?? "–"],
    ...["executor", "proposer"].map(
      (role) =>
        [
          role,
          (r: Receipt) => {
            const m = r.models.find((x) => x.role === role);
            return m ? `${m.model} @ ${m.endpoint ?? "–"} (${m.dialect}) · ${m.calls} calls, ${m.cache_hits} cached` : "–";
          },
        ] as [string, (r: Receipt) => string],
    ),
    [
      "settings",
      (r) =>
        Object.entries(r.settings)
          .map(([k, v]) => `${k}=${v}`)
          .join(", "),
    ],
    ["seed harness", (r) => r.harnesses.seed?.slice(0, 12) ?? "–"],
    ["candidates", (r) => `${r.harnesses.candidates} ${JSON.stringify(r.harnesses.by_status)}`],
    [
      "measured",
      (r) =>
        `${r.measurements.rollouts} rollouts, ${r.measurements.evaluations} evaluations (${r.measurements.invalid_evaluations} invalid)`,
    ],
    ["failed", (r) => (r.failed.length ? r.failed.map((f) => f.what).join(", ") : "nothing")],
  ];
  return (
    <>
      <div className="titlebar">
        <h1>Compare {data.runs.length} runs</h1>
      </div>
      {data.warnings.length > 0 && (
        <div className="warning" data-testid="identity-warning">
          <b>These runs were not measured the same way.</b> Their measurement identities differ:
          <ul>
            {data.warnings.map((w) => (
              <li key={w} className="mono small">
                {w}
              </li>
            ))}
          </ul>
        </div>
      )}
      <section>
        <h2>Best score so far, by round</h2>
        <Chart
          testId="compare-curve"
          xLabel="round"
          yLabel="best so far"
          data={chart.aligned}
          pointCount={chart.points}
          legend={(idx) => {
            const xs = chart.aligned[0] as number[];
            const i = idx ?? xs.length - 1;
            return [
              { label: idx === null ? "latest round" : "round", value: String(xs[i] ?? "–") },
              ...data.runs.map((r, k) => ({
                label: r.id,
                value: score(carried(chart.aligned[k + 1] as (number | null)[], i)),
                color: COLOURS[k % COLOURS.length],
              })),
            ];
          }}
          series={data.runs.map((r, i) => ({
            label: r.id,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            spanGaps: true,
            points: { show: true, size: 6 },
          }))}
        />
      </section>
      <section>
        <h2>Receipts</h2>
        <table className="grid receipts" data-testid="receipts">
          <thead>
            <tr>
              <th />
              {data.runs.map((r) => (
                <th key={r.id}>
                  <Link to={runUrl(r.id)}>{r.id}</Link>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(([label, get]) => {
              // A receipt holds a run folder's records, which may be anyone's: a value of a shape no row expects is "–".
              const values = data.runs.map((r) => {
                try {
                  return str(get(r.receipt));
                } catch {
                  return "–";
                }
              });
              const differs = new Set(values).size > 1;
              return (
                <tr key={label} className={differs ? "differs" : ""}>
                  <th>{label}</th>
                  {values.map((v, i) => (
                    <td key={data.runs[i]?.id} className="small">
                      {v}
                    </td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      </section>
    </>
  );
}
