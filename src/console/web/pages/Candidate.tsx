import { useEffect, useState } from "react";
import { getJson, runPath, useJson } from "../api.ts";
import { Diff } from "../components/Diff.tsx";
import { ErrorPage } from "../components/ErrorPage.tsx";
import { Status } from "../components/Status.tsx";
import { duration, num, score, signed, str } from "../format.ts";
import { candidateUrl, Link, rolloutUrl, runUrl } from "../router.tsx";
import type { CandidateDetail, CandidateRow, Page } from "../types.ts";

/** What the console says under a harness file or diff it cut (the server sends at most `bytes` of one). */
const cut = (bytes: number) =>
  `cut at ${Math.round(bytes / 1024 / 1024)} MiB; read the rest with git from the run's harnesses.git`;

export function CandidatePage({ run, id }: { run: string; id: string }) {
  const { data, error } = useJson<CandidateDetail>(`${runPath(run)}/candidates/${encodeURIComponent(id)}`);
  const [file, setFile] = useState<string | null>(null);
  const [content, setContent] = useState<string>("");
  const [against, setAgainst] = useState<string>("");
  const [diff, setDiff] = useState<{ text: string; error?: string; truncated?: number } | null>(null);

  useEffect(() => {
    if (!data) return;
    const first = data.files.includes("prompt.md") ? "prompt.md" : (data.files[0] ?? null);
    setFile((f) => f ?? first);
  }, [data]);
  useEffect(() => {
    if (!file) return;
    getJson<{ content: string; truncated?: number }>(
      `${runPath(run)}/candidates/${encodeURIComponent(id)}/file?path=${encodeURIComponent(file)}`,
    )
      .then((r) => setContent(r.truncated ? `${r.content}\n… (${cut(r.truncated)})` : r.content))
      .catch((e: Error) => setContent(`(${e.message})`));
  }, [run, id, file]);
  useEffect(() => {
    if (!data?.commit_sha) return;
    const base = against || data.parent;
    if (!base) return setDiff({ text: "", error: "this candidate has no parent to compare with" });
    getJson<{ diff: string; truncated?: number }>(
      `${runPath(run)}/diff?a=${encodeURIComponent(base)}&b=${encodeURIComponent(id)}`,
    )
      .then((r) => setDiff({ text: r.diff, truncated: r.truncated }))
      .catch((e: Error) => setDiff({ text: "", error: e.message }));
  }, [run, id, data, against]);

  if (error) return <ErrorPage message={error} run={error.startsWith("no run named") ? undefined : run} />;
  if (!data) return <p className="muted">Loading candidate…</p>;
  return (
    <>
      <div className="titlebar">
        <h1>
          <Link to={runUrl(run)}>{run}</Link> / {id}
        </h1>
        <Status value={data.status} />
        <span className="muted">
          round {str(data.round)}, slot {str(data.slot)} · score <span className="mono">{score(data.score)}</span> · reward{" "}
          <span className="mono">{signed(data.reward)}</span> · advantage <span className="mono">{signed(data.advantage)}</span>
          {data.parent && (
            <>
              {" "}
              · parent <Link to={candidateUrl(run, data.parent)}>{data.parent}</Link>
            </>
          )}
        </span>
      </div>
      <section>
        <h2>Gate</h2>
        <table className="kv" data-testid="gate">
          <tbody>
            <tr>
              <th>verdict</th>
              <td>
                <Status value={data.status} /> {data.repaired ? "(parsed after one repair: charged the minimum reward)" : ""}
              </td>
            </tr>
            <tr>
              <th>refusal</th>
              <td>{data.gate_error ? <pre className="error">{str(data.gate_error)}</pre> : "none"}</td>
            </tr>
            <tr>
              <th>changes</th>
              <td>{data.changed.length ? data.changed.join(", ") : "–"}</td>
            </tr>
            <tr>
              <th>content hash</th>
              <td className="mono small">{data.content_hash ?? "–"}</td>
            </tr>
            <tr>
              <th>spec</th>
              <td>
                <pre className="small">{data.spec ? JSON.stringify(data.spec, null, 2) : "–"}</pre>
              </td>
            </tr>
          </tbody>
        </table>
      </section>
      {data.files.length > 0 && (
        <section>
          <h2>Harness package</h2>
          <div className="files">
            <ul className="file-list" data-testid="file-list">
              {data.files.map((f) => (
                <li key={f}>
                  <button type="button" className={f === file ? "link active" : "link"} onClick={() => setFile(f)}>
                    {f}
                  </button>
                </li>
              ))}
            </ul>
            <pre className="file" data-testid="file-content">
              {content}
            </pre>
          </div>
        </section>
      )}
      {data.commit_sha && (
        <section>
          <h2>
            Diff against <Against run={run} id={id} parent={data.parent} onPick={setAgainst} />
          </h2>
          {diff?.error ? (
            <p className="muted">{diff.error}</p>
          ) : diff ? (
            <>
              <Diff text={diff.text} />
              {diff.truncated ? <p className="muted">{cut(diff.truncated)}</p> : null}
            </>
          ) : (
            <p className="muted">Loading…</p>
          )}
        </section>
      )}
      <section>
        <h2>Rollouts</h2>
        <div className="table-wrap">
          <table className="grid" data-testid="candidate-rollouts">
            <thead>
              <tr>
                <th>rollout</th>
                <th>kind</th>
                <th>status</th>
                <th>stop</th>
                <th className="r">start</th>
                <th className="r">best</th>
                <th className="r">evaluations</th>
                <th className="r">time</th>
              </tr>
            </thead>
            <tbody>
              {data.rollouts.map((r) => (
                <tr key={r.id}>
                  <td className="nowrap">
                    <Link to={rolloutUrl(run, r.id)}>{r.id}</Link>
                  </td>
                  <td>{str(r.kind)}</td>
                  <td>
                    <Status value={r.status} />
                  </td>
                  <td>{str(r.error ?? r.stop_reason) || "–"}</td>
                  <td className="r mono">{score(r.start_score)}</td>
                  <td className="r mono">{score(r.best_score)}</td>
                  <td className="r">
                    {num(r.evals_used)} ({num(r.evals_invalid)} invalid)
                  </td>
                  <td className="r">{duration(r.seconds ?? 0)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </>
  );
}

/**
 * Which candidate to diff against: its parent unless a candidate id is typed; the suggestions come from the
 * server a few at a time (a run can have 50,000 candidates).
 */
function Against({ run, id, parent, onPick }: { run: string; id: string; parent: string | null; onPick: (id: string) => void }) {
  const [q, setQ] = useState("");
  const { data } = useJson<Page<CandidateRow>>(`${runPath(run)}/candidates?limit=50&q=${encodeURIComponent(q)}`);
  const options = (data?.items ?? []).filter((c) => c.id !== id && c.commit_sha);
  useEffect(() => {
    if (q === "") onPick("");
    else if (data?.items.some((c) => c.id === q && c.commit_sha)) onPick(q);
  }, [q, data, onPick]);
  return (
    <>
      <input
        list="against-options"
        value={q}
        onChange={(e) => setQ(e.target.value.trim())}
        placeholder={parent ? `its parent (${parent}); or type a candidate id` : "type a candidate id"}
        data-testid="diff-against"
        aria-label="candidate to diff against"
      />
      <datalist id="against-options">
        {options.map((c) => (
          <option key={c.id} value={c.id}>
            {str(c.status)}, {score(c.score)}
          </option>
        ))}
      </datalist>
    </>
  );
}
