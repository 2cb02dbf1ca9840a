import { useEffect, useState } from "react";
import { getJson, runPath, useJson } from "../api.ts";
import { Collapsible } from "../components/Collapsible.tsx";
import { ErrorPage } from "../components/ErrorPage.tsx";
import { Status } from "../components/Status.tsx";
import { Conversation, source } from "../components/TrajectoryEvent.tsx";
import { duration, num, score, str } from "../format.ts";
import { candidateUrl, Link, runUrl } from "../router.tsx";
import type { RolloutDetail, Trajectory, TrajectoryEvent } from "../types.ts";

const PAGE = 500;

export function RolloutPage({ run, id }: { run: string; id: string }) {
  const base = `${runPath(run)}/rollouts/${encodeURIComponent(id)}`;
  const { data, error } = useJson<RolloutDetail>(base);
  const [events, setEvents] = useState<TrajectoryEvent[]>([]);
  const [total, setTotal] = useState(0);
  const [trajectoryError, setTrajectoryError] = useState<string | null>(null);

  useEffect(() => {
    setEvents([]);
    getJson<Trajectory>(`${base}/trajectory?limit=${PAGE}`)
      .then((t) => {
        setEvents(t.events);
        setTotal(t.total);
      })
      .catch((e: Error) => setTrajectoryError(e.message));
  }, [base]);
  const [packagePrompt, setPackagePrompt] = useState<string | null>(null);
  const recordsPrompt = events.some((e) => e.type === "message" && source(e) === "harness");
  useEffect(() => {
    setPackagePrompt(null);
    if (!data || recordsPrompt || events.length === 0) return;
    getJson<{ content: string }>(`${runPath(run)}/candidates/${encodeURIComponent(data.candidate_id)}/file?path=prompt.md`)
      .then((r) => setPackagePrompt(r.content))
      .catch(() => setPackagePrompt(null));
  }, [run, data, recordsPrompt, events.length]);
  const more = () =>
    getJson<Trajectory>(`${base}/trajectory?offset=${events.length}&limit=${PAGE}`).then((t) =>
      setEvents((e) => [...e, ...t.events]),
    );

  if (error) return <ErrorPage message={error} run={error.startsWith("no run named") ? undefined : run} />;
  if (!data) return <p className="muted">Loading rollout…</p>;
  return (
    <>
      <div className="titlebar">
        <h1>
          <Link to={runUrl(run)}>{run}</Link> / <Link to={candidateUrl(run, data.candidate_id)}>{data.candidate_id}</Link> /
          rollout {id}
        </h1>
        <Status value={data.status} />
      </div>
      <div className="cards">
        <Metric label="start" value={score(data.start_score)} />
        <Metric label="best" value={score(data.best_score)} />
        <Metric label="evaluations" value={`${data.evals_used} (${data.evals_invalid} invalid)`} />
        <Metric label="stop" value={str(data.error ?? data.stop_reason ?? "–")} />
        <Metric label="tokens" value={num((data.prompt_tokens ?? 0) + (data.completion_tokens ?? 0))} />
        <Metric label="model calls" value={num(data.model_calls)} />
        <Metric label="time" value={duration(data.seconds ?? 0)} />
        <Metric label="identity" value={str(data.identity_digest).slice(0, 12) || "–"} />
      </div>
      {data.evaluations.length > 0 && (
        <section>
          <h2>Evaluations</h2>
          <div className="table-wrap">
            <table className="grid" data-testid="evaluations">
              <thead>
                <tr>
                  <th>#</th>
                  <th className="r">score</th>
                  <th>reason</th>
                  <th className="r">seconds</th>
                  <th>program</th>
                </tr>
              </thead>
              <tbody>
                {data.evaluations.map((e) => (
                  <tr key={e.idx}>
                    <td>
                      <a href={`#eval-${e.idx}`}>{e.idx}</a>
                    </td>
                    <td className="r mono">{e.valid ? score(e.score) : <span className="error">invalid</span>}</td>
                    <td className="small">{str(e.reason)}</td>
                    <td className="r">{score(e.seconds, 2)}</td>
                    <td className="mono small">{str(e.program_sha).slice(0, 12)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <section>
        <h2>Conversation</h2>
        {packagePrompt !== null && (
          <div className="msg system" data-testid="event-harness">
            <div className="who">
              system prompt (from the candidate's harness package: this rollout's trajectory predates recorded prompts)
            </div>
            <Collapsible text={packagePrompt} />
          </div>
        )}
        {trajectoryError && <p className="error">{trajectoryError}</p>}
        <Conversation events={events} base={base} />
        {events.length < total && (
          <button type="button" onClick={more}>
            Show more ({total - events.length} events left)
          </button>
        )}
      </section>
    </>
  );
}

function Metric({ label, value }: { label: string; value: string }) {
  return (
    <div className="card">
      <div className="label">{label}</div>
      <div className="value small">{value}</div>
    </div>
  );
}
