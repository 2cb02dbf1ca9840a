import { useMemo, useState } from "react";
import type uPlot from "uplot";
import { runPath, useJson, useLiveJson } from "../api.ts";
import { Chart, type LegendItem } from "../components/Chart.tsx";
import { ErrorPage } from "../components/ErrorPage.tsx";
import { Lineage } from "../components/Lineage.tsx";
import { Pager } from "../components/Pager.tsx";
import { Status } from "../components/Status.tsx";
import { type Curve, carried, curvePoints, runCurve } from "../curve.ts";
import { duration, num, score, signed, str, when } from "../format.ts";
import { candidateUrl, Link, usePageInAddress } from "../router.tsx";
import type { CandidateRow, Page, Round, RunPage as RunData, TaskResults } from "../types.ts";

const ROWS_PER_PAGE = 100;
const COLOURS = { best: "#1f5fbf", candidate: "#2a9d5b", invalid: "#c0392b" };

/** The legend under the cursor: the round, its best so far, and the candidate there if there is one. */
function curveLegend(curve: Curve, idx: number | null): LegendItem[] {
  const i = idx ?? curve.x.length - 1;
  if (i < 0) return [{ label: "no rounds finished yet", value: "" }];
  const items: LegendItem[] = [
    { label: idx === null ? "latest round" : "round", value: String(curve.round[i]) },
    { label: "best so far", value: score(carried(curve.bestSoFar, i)), color: COLOURS.best },
  ];
  if (idx === null) {
    items.push({ label: "candidates scored", value: num(curve.counts.scored), color: COLOURS.candidate });
    items.push({ label: "without a score", value: num(curve.counts.invalid), color: COLOURS.invalid });
  } else if (curve.candidates[i] !== null)
    items.push({ label: `candidate in slot ${curve.slot[i]}`, value: score(curve.candidates[i]), color: COLOURS.candidate });
  else if (curve.invalid[i] !== null)
    items.push({ label: `candidate in slot ${curve.slot[i]}`, value: "no score (refused or failed)", color: COLOURS.invalid });
  return items;
}

export function RunPage({ id }: { id: string }) {
  const { data, error } = useLiveJson<RunData & { config: { task?: string } }>(runPath(id), `${runPath(id)}/events`);
  const curve = useMemo(() => (data ? runCurve(data.rounds, curvePoints(data.curve), data.direction) : null), [data]);
  const chartData = useMemo<uPlot.AlignedData>(
    () => (curve ? [curve.x, curve.bestSoFar, curve.candidates, curve.invalid] : [[], [], [], []]),
    [curve],
  );
  if (error) return <ErrorPage message={error} />;
  if (!data || !curve) return <p className="muted">Loading run…</p>;
  return (
    <>
      <div className="titlebar">
        <h1>{id}</h1>
        <Status value={data.status} />
        {data.status === "running" && (
          <span className="live" title="updates as the run writes its records">
            ● live
          </span>
        )}
        <span className="muted">
          {[data.task, data.method, data.executor && `executor ${data.executor}`, data.proposer && `proposer ${data.proposer}`]
            .filter(Boolean)
            .join(" · ")}
        </span>
      </div>
      <div className="cards">
        <Card label="best" value={score(data.best_score)} testId="best-score" />
        <Card label="start" value={score(data.start_score)} />
        <Card
          label="rounds"
          value={`${data.rounds_done}${data.rounds_planned ? ` / ${data.rounds_planned}` : ""}`}
          testId="rounds-done"
        />
        <Card label="candidates" value={num(data.candidates_total)} />
        <Card label="rollouts" value={num(data.rollouts)} />
        <Card label="tokens" value={num(data.cost.prompt_tokens + data.cost.completion_tokens)} />
        <Card label="model calls" value={`${num(data.cost.calls)} (${num(data.cost.cached)} cached)`} />
        <Card label="time" value={duration(data.cost.seconds)} />
      </div>
      <section>
        <h2>Score by round ({data.direction === "maximize" ? "higher" : "lower"} is better)</h2>
        <div
          data-testid="curve-box"
          data-rounds={curve.counts.rounds}
          data-scored={curve.counts.scored}
          data-invalid={curve.counts.invalid}
        >
          <Chart
            testId="curve"
            xLabel="round"
            yLabel="score"
            data={chartData}
            pointCount={curve.counts.rounds + curve.counts.scored + curve.counts.invalid}
            legend={(idx) => curveLegend(curve, idx)}
            series={[
              { label: "best so far", stroke: COLOURS.best, width: 2.5, spanGaps: true, points: { show: true, size: 7 } },
              {
                label: "candidate",
                stroke: COLOURS.candidate,
                width: 0,
                paths: () => null,
                points: { show: true, size: 7, fill: COLOURS.candidate },
              },
              {
                label: "no score (refused or failed)",
                stroke: COLOURS.invalid,
                width: 0,
                paths: () => null,
                points: { show: true, size: 8, fill: "#fff", stroke: COLOURS.invalid, width: 2 },
              },
            ]}
          />
        </div>
      </section>
      <div className="two">
        <section>
          <h2>Lineage</h2>
          <Lineage run={id} best={data.best_score} version={data} />
        </section>
        <section>
          <h2>Rounds</h2>
          <RoundTable run={id} rounds={data.rounds} total={data.candidates_total} version={data} />
        </section>
      </div>
      <TaskTable run={id} version={data} />
    </>
  );
}

/** A QA run's per-task results (`hone eval`, each epoch of `hone train`), a page at a time; nothing for other runs. */
function TaskTable({ run, version }: { run: string; version: unknown }) {
  const [offset, setOffset] = useState(0);
  const { data, error } = useJson<TaskResults>(`${runPath(run)}/tasks?offset=${offset}&limit=${ROWS_PER_PAGE}`, version);
  if (error) return <p className="error">{error}</p>;
  if (!data || data.total === 0) return null;
  const measured = new Map(data.measurements.map((m) => [m.id, m]));
  return (
    <section>
      <h2>Tasks</h2>
      <p className="muted small" data-testid="measurements">
        {data.measurements
          .map((m) => `${m.candidate_id}: ${m.status === "finished" ? `${m.solved ?? 0} of ${m.tasks} solved` : m.status}`)
          .join(" · ")}
      </p>
      <Pager
        testId="tasks-pager"
        offset={offset}
        total={data.total}
        perPage={ROWS_PER_PAGE}
        setOffset={setOffset}
        noun="results"
      />
      <div className="table-wrap">
        <table className="grid" data-testid="tasks-table">
          <thead>
            <tr>
              <th>candidate</th>
              <th>task</th>
              <th>status</th>
              <th className="r">score</th>
              <th>answer</th>
              <th>extracted</th>
              <th className="r">steps</th>
              <th className="r">tokens</th>
              <th>trajectory</th>
            </tr>
          </thead>
          <tbody>
            {data.items.map((t) => (
              <tr key={`${t.measurement_id} ${t.task_id}`} data-testid="task-row">
                <td className="nowrap">
                  <Link to={candidateUrl(run, measured.get(t.measurement_id)?.candidate_id ?? t.measurement_id)}>
                    {measured.get(t.measurement_id)?.candidate_id ?? t.measurement_id}
                  </Link>
                </td>
                <td className="mono small">{t.task_id}</td>
                <td>
                  <Status value={t.status} />
                  {t.error ? <span className="error small"> {str(t.error).slice(0, 120)}</span> : null}
                </td>
                <td className="r mono">{score(t.score)}</td>
                <td className="small">{t.answer ? str(t.answer).slice(0, 200) : "–"}</td>
                <td className="mono small">{t.extracted ?? "–"}</td>
                <td className="r mono">{num(t.steps)}</td>
                <td className="r mono">{num(t.tokens)}</td>
                <td className="small">
                  {t.trajectory ? <a href={`${runPath(run)}/artifact?path=${encodeURIComponent(t.trajectory)}`}>jsonl</a> : "–"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The round table, newest round first, a page of candidates at a time; each round's header before its rows. */
function RoundTable({ run, rounds, total, version }: { run: string; rounds: Round[]; total: number; version: unknown }) {
  // The page is kept in the address (?page=N), so back from a candidate returns to it and it can be linked.
  const [offset, setOffset] = usePageInAddress(ROWS_PER_PAGE, Math.max(1, Math.ceil(total / ROWS_PER_PAGE)));
  const { data, error } = useJson<Page<CandidateRow>>(
    `${runPath(run)}/candidates?offset=${offset}&limit=${ROWS_PER_PAGE}`,
    version,
  );
  const byRound = new Map(rounds.map((r) => [r.round, r]));
  const groups: { round: number; rows: CandidateRow[] }[] = [];
  for (const c of data?.items ?? []) {
    const last = groups.at(-1);
    if (last && last.round === c.round) last.rows.push(c);
    else groups.push({ round: c.round, rows: [c] });
  }
  return (
    <>
      <Pager
        testId="rounds-pager"
        offset={offset}
        total={total}
        perPage={ROWS_PER_PAGE}
        setOffset={setOffset}
        labels={["newer", "older"]}
        noun="candidates"
      />
      {error && <p className="error">{error}</p>}
      <div className="table-wrap">
        <table className="grid" data-testid="rounds-table">
          <thead>
            <tr>
              <th>round</th>
              <th>candidate</th>
              <th>status</th>
              <th className="r">score</th>
              <th className="r">reward</th>
              <th className="r">advantage</th>
              <th>change</th>
              <th>method's decision</th>
            </tr>
          </thead>
          {groups.map(({ round, rows }) => {
            const r = byRound.get(round);
            return (
              <tbody key={round} className="round">
                <tr className="round-head">
                  <td className="r">{round}</td>
                  <td colSpan={2}>
                    incumbent <span className="mono">{score(r?.incumbent_score)}</span> → best{" "}
                    <span className="mono">{score(r?.best_score)}</span> {r?.moved ? "· moved" : ""}
                  </td>
                  <td colSpan={5} className="muted small">
                    {r && <Status value={r.status} />} <span className="nowrap">{when(r?.started_at ?? null)}</span>
                  </td>
                </tr>
                {rows.map((c) => (
                  <tr key={c.id} data-testid="candidate-row">
                    <td />
                    <td className="nowrap">
                      <Link to={candidateUrl(run, c.id)}>{c.id}</Link>
                    </td>
                    <td>
                      <Status value={c.status} />
                      {c.repaired && c.status !== "repaired" ? <span className="muted small"> repaired</span> : null}
                    </td>
                    <td className="r mono">{score(c.score)}</td>
                    <td className="r mono">{signed(c.reward)}</td>
                    <td className="r mono">{signed(c.advantage)}</td>
                    <td className="small">
                      {c.gate_error ? <span className="error">{str(c.gate_error).slice(0, 120)}</span> : c.changed.join(", ")}
                    </td>
                    <td className="small" data-testid="method-decision" title={c.method_decision?.reason ?? undefined}>
                      {decision(c.method_decision)}
                    </td>
                  </tr>
                ))}
              </tbody>
            );
          })}
        </table>
      </div>
    </>
  );
}

/** "kept (rule)" or "not kept (rule)"; nothing when the method has not decided (the seed, a refused proposal). */
function decision(d: CandidateRow["method_decision"]): string {
  if (!d || d.kept === null) return "";
  return `${d.kept ? "kept" : "not kept"}${d.rule ? ` (${d.rule})` : ""}`;
}

function Card({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="card">
      <div className="label">{label}</div>
      <div className="value" data-testid={testId}>
        {value}
      </div>
    </div>
  );
}
