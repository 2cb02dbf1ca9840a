import type { ReactNode } from "react";
import { score } from "../format.ts";
import { candidateUrl, Link } from "../router.tsx";
import type { CandidateRow } from "../types.ts";
import { Status } from "./Status.tsx";

/**
 * The candidate lineage as a tree: every candidate under the harness it was proposed from. A promoted candidate
 * (one that later candidates descend from) carries its own subtree; refused ones are leaves without a score.
 */
export function Lineage({ run, candidates, best }: { run: string; candidates: CandidateRow[]; best: string | null }) {
  const children = new Map<string | null, CandidateRow[]>();
  for (const c of candidates) {
    const key = c.parent ?? null;
    const list = children.get(key) ?? [];
    list.push(c);
    children.set(key, list);
  }
  const render = (c: CandidateRow, depth: number): ReactNode => {
    const kids = children.get(c.id) ?? [];
    return (
      <li key={c.id} data-testid="lineage-node">
        <span className={`node${c.id === best ? " best" : ""}`}>
          <Link to={candidateUrl(run, c.id)}>{c.id}</Link> <Status value={c.status} />{" "}
          <span className="mono">{score(c.score)}</span>
          {c.changed.length > 0 && <span className="muted small"> · {c.changed.slice(0, 3).join(", ")}</span>}
          {kids.length > 0 && <span className="muted small"> · {kids.length} children</span>}
        </span>
        {kids.length > 0 && depth < 200 && <ul>{kids.map((k) => render(k, depth + 1))}</ul>}
      </li>
    );
  };
  const roots = children.get(null) ?? [];
  return (
    <ul className="tree" data-testid="lineage">
      {roots.map((r) => render(r, 0))}
    </ul>
  );
}
