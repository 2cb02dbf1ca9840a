import { type ReactNode, useCallback, useEffect, useState } from "react";
import { getJson, runPath } from "../api.ts";
import { num, score } from "../format.ts";
import { candidateUrl, Link } from "../router.tsx";
import type { CandidateRow, Page } from "../types.ts";
import { Status } from "./Status.tsx";

const MORE = 100;

/** A request the tree has made: the top of the tree, more roots, or a page of one node's children. */
interface Asked {
  node: string | null;
  offset: number;
}

const url = (run: string, a: Asked, limit: number) =>
  `${runPath(run)}/lineage?offset=${a.offset}&limit=${limit}${a.node ? `&node=${encodeURIComponent(a.node)}` : ""}`;

/**
 * The candidate lineage as a tree: every candidate under the harness it was proposed from. The server sends the
 * top of the tree (the first candidates by round: a small run whole) and then a page of children per "show more",
 * so a run of 50,000 candidates never loads them all. A live run reloads the pages already shown.
 */
export function Lineage({ run, best, version }: { run: string; best: number | null; version: unknown }) {
  const [asked, setAsked] = useState<Asked[]>([{ node: null, offset: 0 }]);
  const [rows, setRows] = useState<CandidateRow[]>([]);
  const [rootsTotal, setRootsTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(
    (pages: Asked[]) =>
      Promise.all(pages.map((a, i) => getJson<Page<CandidateRow>>(url(run, a, i === 0 ? 200 : MORE))))
        .then((answers) => {
          const seen = new Set<string>();
          const all = answers.flatMap((p) => p.items).filter((c) => !seen.has(c.id) && seen.add(c.id));
          setRows(all);
          setRootsTotal(answers[0]?.total ?? 0);
          setError(null);
        })
        .catch((e: Error) => setError(e.message)),
    [run],
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: reloads what is shown whenever the run changes
  useEffect(() => {
    void load(asked);
  }, [load, asked, version]);

  if (error) return <p className="error">{error}</p>;
  const ids = new Set(rows.map((r) => r.id));
  const children = new Map<string | null, CandidateRow[]>();
  for (const c of rows) {
    // A node whose parent is not loaded yet hangs at the top, saying whose it is.
    const key = c.parent !== null && ids.has(c.parent) ? c.parent : null;
    children.set(key, [...(children.get(key) ?? []), c]);
  }
  const more = (node: string | null, offset: number) => setAsked((a) => [...a, { node, offset }]);
  const render = (c: CandidateRow, depth: number): ReactNode => {
    const kids = children.get(c.id) ?? [];
    return (
      <li key={c.id} data-testid="lineage-node">
        <span className={`node${best !== null && c.score === best ? " best" : ""}`}>
          <Link to={candidateUrl(run, c.id)}>{c.id}</Link> <Status value={c.status} />{" "}
          <span className="mono">{score(c.score)}</span>
          {c.changed.length > 0 && <span className="muted small"> · {c.changed.slice(0, 3).join(", ")}</span>}
          {c.children > 0 && <span className="muted small"> · {num(c.children)} children</span>}
          {c.parent !== null && !ids.has(c.parent) && <span className="muted small"> · from {c.parent}</span>}
        </span>
        {(kids.length > 0 || c.children > 0) && depth < 200 && (
          <ul>
            {kids.map((k) => render(k, depth + 1))}
            {c.children > kids.length && (
              <li>
                <button type="button" className="link small" onClick={() => more(c.id, kids.length)} data-testid="lineage-more">
                  show {num(Math.min(MORE, c.children - kids.length))} more of {num(c.children - kids.length)} not shown
                </button>
              </li>
            )}
          </ul>
        )}
      </li>
    );
  };
  const roots = children.get(null) ?? [];
  const rootsShown = rows.filter((r) => r.parent === null).length;
  return (
    <ul className="tree" data-testid="lineage" data-shown={rows.length}>
      {roots.map((r) => render(r, 0))}
      {rootsTotal > rootsShown && (
        <li>
          <button type="button" className="link small" onClick={() => more(null, rootsShown)}>
            show more candidates without a parent ({num(rootsTotal - rootsShown)} not shown)
          </button>
        </li>
      )}
    </ul>
  );
}
