import { useMemo, useState } from "react";
import type uPlot from "uplot";
import { runPath, useLiveJson } from "../api.ts";
import { Chart } from "../components/Chart.tsx";
import { Lineage } from "../components/Lineage.tsx";
import { Status } from "../components/Status.tsx";
import { runCurve } from "../curve.ts";
import { duration, num, score, signed, when } from "../format.ts";
import { candidateUrl, Link } from "../router.tsx";
import type { RunPage as RunData } from "../types.ts";

const ROUNDS_PER_PAGE = 20;

export function RunPage({ id }: { id: string }) {
  const { data, error } = useLiveJson<RunData & { config: { task?: string } }>(runPath(id), `${runPath(id)}/events`);
  const [roundPage, setRoundPage] = useState(0);
  const curve = useMemo(() => (data ? runCurve(data.rounds, data.candidates, data.direction) : null), [data]);
  const chartData = useMemo<uPlot.AlignedData>(
    () => (curve ? [curve.x, curve.bestSoFar, curve.candidates, curve.invalid] : [[], [], [], []]),
    [curve],
  );
  if (error) return <p className="error">{error}</p>;
  if (!data || !curve) return <p className="muted">Loading run…</p>;
  const bestCandidate =
    [...data.candidates]
      .filter((c) => c.score !== null)
      .sort((a, b) => (data.direction === "maximize" ? (b.score ?? 0) - (a.score ?? 0) : (a.score ?? 0) - (b.score ?? 0)))[0]
      ?.id ?? null;
  const byRound = new Map<number, typeof data.candidates>();
  for (const c of data.candidates) byRound.set(c.round, [...(byRound.get(c.round) ?? []), c]);
  const roundsShown = [...data.rounds].reverse().slice(roundPage * ROUNDS_PER_PAGE, (roundPage + 1) * ROUNDS_PER_PAGE);
  const pages = Math.ceil(data.rounds.length / ROUNDS_PER_PAGE);
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
          {data.task} · {data.method} · executor {data.executor} · proposer {data.proposer}
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
        <Card label="candidates" value={num(data.candidates.length)} />
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
            series={[
              { label: "best so far", stroke: "#1f5fbf", width: 2.5, spanGaps: true, points: { show: true, size: 7 } },
              {
                label: "candidate",
                stroke: "#2a9d5b",
                width: 0,
                paths: () => null,
                points: { show: true, size: 7, fill: "#2a9d5b" },
              },
              {
                label: "no score (refused or failed)",
                stroke: "#c0392b",
                width: 0,
                paths: () => null,
                points: { show: true, size: 8, fill: "#fff", stroke: "#c0392b", width: 2 },
              },
            ]}
          />
        </div>
      </section>
      <div className="two">
        <section>
          <h2>Lineage</h2>
          <Lineage run={id} candidates={data.candidates} best={bestCandidate} />
        </section>
        <section>
          <h2>Rounds</h2>
          {pages > 1 && (
            <div className="pager">
              <button type="button" disabled={roundPage === 0} onClick={() => setRoundPage(roundPage - 1)}>
                newer
              </button>
              <span className="muted">
                page {roundPage + 1} of {pages}
              </span>
              <button type="button" disabled={roundPage >= pages - 1} onClick={() => setRoundPage(roundPage + 1)}>
                older
              </button>
            </div>
          )}
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
              </tr>
            </thead>
            {roundsShown.map((r) => (
              <tbody key={r.round} className="round">
                <tr className="round-head">
                  <td>{r.round}</td>
                  <td colSpan={2}>
                    incumbent {score(r.incumbent_score)} → best {score(r.best_score)} {r.moved ? "· moved" : ""}
                  </td>
                  <td colSpan={4} className="muted small">
                    <Status value={r.status} /> {when(r.started_at)}
                  </td>
                </tr>
                {(byRound.get(r.round) ?? []).map((c) => (
                  <tr key={c.id} data-testid="candidate-row">
                    <td />
                    <td>
                      <Link to={candidateUrl(id, c.id)}>{c.id}</Link>
                    </td>
                    <td>
                      <Status value={c.status} />
                      {c.repaired && c.status !== "repaired" ? <span className="muted small"> repaired</span> : null}
                    </td>
                    <td className="r mono">{score(c.score)}</td>
                    <td className="r mono">{signed(c.reward)}</td>
                    <td className="r mono">{signed(c.advantage)}</td>
                    <td className="small">
                      {c.gate_error ? <span className="error">{c.gate_error.slice(0, 120)}</span> : c.changed.join(", ")}
                    </td>
                  </tr>
                ))}
              </tbody>
            ))}
          </table>
        </section>
      </div>
    </>
  );
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
