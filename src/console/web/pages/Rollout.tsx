import { useEffect, useState } from "react";
import { getJson, runPath, useJson } from "../api.ts";
import { Diff } from "../components/Diff.tsx";
import { Status } from "../components/Status.tsx";
import { duration, num, score } from "../format.ts";
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
  const recordsPrompt = events.some((e) => e.type === "message" && e.source === "harness");
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

  if (error) return <p className="error">{error}</p>;
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
        <Metric label="stop" value={data.error ?? data.stop_reason ?? "–"} />
        <Metric label="tokens" value={num((data.prompt_tokens ?? 0) + (data.completion_tokens ?? 0))} />
        <Metric label="model calls" value={num(data.model_calls)} />
        <Metric label="time" value={duration(data.seconds ?? 0)} />
        <Metric label="identity" value={data.identity_digest?.slice(0, 12) ?? "–"} />
      </div>
      {data.evaluations.length > 0 && (
        <section>
          <h2>Evaluations</h2>
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
                  <td className="small">{e.reason ?? ""}</td>
                  <td className="r">{e.seconds?.toFixed(2)}</td>
                  <td className="mono small">{e.program_sha.slice(0, 12)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      <section>
        <h2>Conversation</h2>
        {packagePrompt !== null && (
          <div className="msg system" data-testid="event-harness">
            <div className="who">
              system prompt (from the candidate's harness package: this rollout's trajectory predates recorded prompts)
            </div>
            <Collapsible text={packagePrompt} limit={600} />
          </div>
        )}
        {trajectoryError && <p className="error">{trajectoryError}</p>}
        <div className="conversation" data-testid="conversation">
          {events.map((e, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: trajectory events are append-only, their position is their identity
            <Event key={i} event={e} base={base} />
          ))}
        </div>
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

function Collapsible({ text, limit = 1200 }: { text: string; limit?: number }) {
  const [open, setOpen] = useState(false);
  if (text.length <= limit) return <pre>{text}</pre>;
  return (
    <>
      <pre>{open ? text : `${text.slice(0, limit)}…`}</pre>
      <button type="button" className="link" onClick={() => setOpen(!open)}>
        {open ? "show less" : `show all ${text.length.toLocaleString()} characters`}
      </button>
    </>
  );
}

function Event({ event: e, base }: { event: TrajectoryEvent; base: string }) {
  const s = (k: string) => (e[k] === undefined || e[k] === null ? "" : String(e[k]));
  switch (e.type) {
    case "message":
      return (
        <div
          className={`msg ${s("source") === "harness" ? "system" : s("source") === "task" ? "user" : "intervention"}`}
          data-testid={`event-${s("source") || "message"}`}
        >
          <div className="who">
            {s("source") === "harness" ? "system prompt" : s("source") === "task" ? "task" : `${s("source")} · ${s("role")}`}
          </div>
          <Collapsible text={s("content")} limit={s("source") === "harness" ? 600 : 1200} />
        </div>
      );
    case "assistant": {
      const calls = (e.tool_calls as { function: { name: string; arguments: string } }[] | undefined) ?? [];
      return (
        <div className="msg assistant" data-testid="event-assistant">
          <div className="who">executor · step {s("iteration")}</div>
          {s("content") && <Collapsible text={s("content")} />}
          {calls.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a call's position in the message is its identity
            <div key={i} className="call">
              <span className="tool">{c.function.name}</span>
              <Args raw={c.function.arguments} />
            </div>
          ))}
        </div>
      );
    }
    case "tool_result":
      return (
        <div className={`msg tool${e.error ? " failed" : ""}`} data-testid="event-tool">
          <div className="who">
            {s("name")} → {e.error ? "error" : "result"}
          </div>
          <Collapsible text={s("output")} limit={800} />
        </div>
      );
    case "evaluation":
      return <EvaluationEvent e={e} base={base} />;
    case "middleware":
      return (
        <div className="note" data-testid="event-middleware">
          middleware <b>{s("middleware")}</b> ({s("hook")}): {s("note")}
        </div>
      );
    case "model_call":
      return null;
    case "model_error":
      return (
        <div className="note error">
          model error ({s("kind")}): {s("message")}
        </div>
      );
    case "rollout_start":
      return (
        <div className="note">
          rollout started · model {s("model")} · budget {s("max_evals")} evaluations · start score{" "}
          {score(e.start_score as number | null)}
        </div>
      );
    case "rollout_end":
      return (
        <div className="note">
          rollout ended: {s("status")}, {s("stop_reason")} · best {score(e.best_score as number | null)}
        </div>
      );
    default:
      return (
        <div className="note">
          {e.type}: <span className="mono small">{JSON.stringify(e).slice(0, 300)}</span>
        </div>
      );
  }
}

/** Tool-call arguments as "name: value" lines; multi-line strings (code, SEARCH/REPLACE blocks) shown as written. */
function Args({ raw }: { raw: string }) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return <pre className="small">{raw}</pre>;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return <pre className="small">{raw}</pre>;
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length === 0) return <span className="muted small"> (no arguments)</span>;
  return (
    <div className="args">
      {entries.map(([k, v]) => (
        <div key={k}>
          <span className="argkey">{k}</span>
          {typeof v === "string" && v.includes("\n") ? (
            <pre className="small">{v}</pre>
          ) : (
            <code className="small"> {JSON.stringify(v)}</code>
          )}
        </div>
      ))}
    </div>
  );
}

function EvaluationEvent({ e, base }: { e: TrajectoryEvent; base: string }) {
  const index = Number(e.index);
  const [shown, setShown] = useState<"none" | "program" | "diff">("none");
  const [text, setText] = useState("");
  const runBase = base.replace(/\/rollouts\/[^/]+$/, "");
  const rollout = decodeURIComponent(base.slice(base.lastIndexOf("/") + 1));
  const show = (what: "program" | "diff") => {
    if (shown === what) return setShown("none");
    setShown(what);
    setText("");
    if (what === "program")
      fetch(`${runBase}/artifact?path=${encodeURIComponent(`rollouts/${rollout}/${String(e.program_file ?? "")}`)}`)
        .then((r) => r.text())
        .then(setText);
    else getJson<{ diff: string }>(`${base}/program-diff?from=${index - 1}&to=${index}`).then((r) => setText(r.diff));
  };
  return (
    <div id={`eval-${index}`} className={`msg evaluation ${e.valid ? "valid" : "invalid"}`} data-testid="event-evaluation">
      <div className="who">
        evaluation {index} · {e.valid ? <b className="mono">{score(e.score as number)}</b> : <b>invalid</b>}
        {e.improved ? " · new best" : ""} · {Number(e.seconds ?? 0).toFixed(2)} s
      </div>
      {!e.valid && <div className="error">{String(e.reason ?? "")}</div>}
      {e.program_file ? (
        <div className="actions">
          <button type="button" className="link" onClick={() => show("program")}>
            program
          </button>
          {index > 1 && (
            <button type="button" className="link" onClick={() => show("diff")} data-testid="program-diff-button">
              diff with evaluation {index - 1}
            </button>
          )}
        </div>
      ) : null}
      {shown === "program" && <pre className="file">{text}</pre>}
      {shown === "diff" && <Diff text={text} testId="program-diff" />}
    </div>
  );
}
