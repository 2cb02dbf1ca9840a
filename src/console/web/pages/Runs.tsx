import { useState } from "react";
import { useLiveJson } from "../api.ts";
import { ErrorPage } from "../components/ErrorPage.tsx";
import { Pager } from "../components/Pager.tsx";
import { Sparkline } from "../components/Sparkline.tsx";
import { Status } from "../components/Status.tsx";
import { duration, num, score, when } from "../format.ts";
import { Link, navigate, runUrl, usePageInAddress } from "../router.tsx";
import type { RunSummary } from "../types.ts";

/** The `hone compare` experiments under the console's folder, each a link to its grid page. */
function Experiments() {
  const { data } = useLiveJson<{ items: { id: string; name: string; planned: number; finished: number }[] }>(
    "/api/experiments",
    "/api/events",
  );
  if (!data || data.items.length === 0) return null;
  return (
    <p data-testid="experiments">
      Grids:{" "}
      {data.items.map((e) => (
        <span key={e.id} className="nowrap">
          <Link to={`/grid?experiment=${encodeURIComponent(e.id)}`}>{e.id}</Link>{" "}
          <span className="muted">
            ({e.finished}/{e.planned} finished){" "}
          </span>
        </span>
      ))}
    </p>
  );
}

/** Run directories per page of the list (a grid of many cells × seeds holds hundreds). */
const RUNS_PER_PAGE = 200;

export function RunsPage() {
  const [offset, setOffset] = usePageInAddress(RUNS_PER_PAGE);
  const { data, error } = useLiveJson<{ total: number; items: RunSummary[] }>(
    `/api/runs?offset=${offset}&limit=${RUNS_PER_PAGE}`,
    "/api/events",
  );
  const [picked, setPicked] = useState<string[]>([]);
  if (error) return <ErrorPage title="The runs could not be listed" message={error} />;
  if (!data) return <p className="muted">Loading runs…</p>;
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id]));
  const compare = () => navigate(`/compare?${picked.map((id) => `run=${encodeURIComponent(id)}`).join("&")}`);
  return (
    <>
      <div className="titlebar">
        <h1>Runs</h1>
        <span className="muted">{data.total} run directories</span>
        <button type="button" disabled={picked.length < 2} onClick={compare} data-testid="compare-button">
          Compare {picked.length >= 2 ? picked.length : ""} runs
        </button>
      </div>
      <Experiments />
      {data.total === 0 && (
        <p className="muted">
          No run directories here yet. Start one with <code>npx hone optimize --task circle-packing --out runs/cp26</code>.
        </p>
      )}
      <Pager testId="runs-pager" perPage={RUNS_PER_PAGE} offset={offset} total={data.total} setOffset={setOffset} />
      <div className="table-wrap">
        <table className="grid" data-testid="runs-table">
          <thead>
            <tr>
              <th />
              <th>run</th>
              <th>task</th>
              <th>method</th>
              <th>executor / proposer</th>
              <th>status</th>
              <th>rounds</th>
              <th>progress</th>
              <th className="r">best</th>
              <th className="r">start</th>
              <th className="r">tokens</th>
              <th className="r">calls</th>
              <th className="r">time</th>
              <th>started</th>
            </tr>
          </thead>
          <tbody>
            {data.items.map((r) => (
              <tr key={r.id} data-testid="run-row">
                <td>
                  <input
                    type="checkbox"
                    aria-label={`pick ${r.id}`}
                    checked={picked.includes(r.id)}
                    onChange={() => toggle(r.id)}
                  />
                </td>
                <td className="nowrap">
                  <Link to={runUrl(r.id)}>{r.id}</Link>
                </td>
                <td>{r.task ?? "–"}</td>
                <td>{r.method}</td>
                <td>
                  {r.executor ?? "–"} / {r.proposer ?? "–"}
                </td>
                <td>
                  <Status value={r.status} />
                </td>
                <td className="nowrap">
                  {r.rounds_done}
                  {r.rounds_planned ? ` / ${r.rounds_planned}` : ""}
                </td>
                <td>{r.round_scores && <Sparkline scores={r.round_scores} direction={r.direction} />}</td>
                <td className="r mono">{score(r.best_score)}</td>
                <td className="r mono">{score(r.start_score)}</td>
                <td className="r">{r.cost ? num(r.cost.prompt_tokens + r.cost.completion_tokens) : "–"}</td>
                <td className="r">{r.cost ? num(r.cost.calls) : "–"}</td>
                <td className="r">{r.cost ? duration(r.cost.seconds) : "–"}</td>
                <td className="nowrap">{when(r.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
