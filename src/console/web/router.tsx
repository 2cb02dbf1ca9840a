import { type MouseEvent, type ReactNode, useEffect, useState } from "react";

/** A few routes over the history API; the server answers every non-API path with the app. */
export function usePath(): { path: string; search: URLSearchParams } {
  const [loc, setLoc] = useState(() => ({ path: location.pathname, search: location.search }));
  useEffect(() => {
    const on = () => setLoc({ path: location.pathname, search: location.search });
    addEventListener("popstate", on);
    return () => removeEventListener("popstate", on);
  }, []);
  return { path: loc.path, search: new URLSearchParams(loc.search) };
}

export function navigate(to: string): void {
  history.pushState(null, "", to);
  dispatchEvent(new PopStateEvent("popstate"));
  scrollTo(0, 0);
}

export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  const onClick = (e: MouseEvent) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} onClick={onClick} className={className}>
      {children}
    </a>
  );
}

export const runUrl = (id: string) => `/run/${encodeURIComponent(id)}`;
export const candidateUrl = (run: string, cid: string) => `${runUrl(run)}/candidate/${encodeURIComponent(cid)}`;
export const rolloutUrl = (run: string, rid: string) => `${runUrl(run)}/rollout/${encodeURIComponent(rid)}`;

/**
 * A paged list's first row, kept in the address as ?page=N (1-based), so Back from a row's page returns to it and a
 * page can be linked; a page number that is not a whole number from 1 to `pages` is page 1.
 */
export function usePageInAddress(perPage: number, pages = 1_000_000): [number, (offset: number) => void] {
  const [offset, setOffsetState] = useState(() => {
    const n = Number(new URLSearchParams(location.search).get("page") ?? "1");
    return Number.isInteger(n) && n >= 1 && n <= pages ? (n - 1) * perPage : 0;
  });
  const setOffset = (next: number) => {
    const url = new URL(location.href);
    if (next === 0) url.searchParams.delete("page");
    else url.searchParams.set("page", String(next / perPage + 1));
    history.replaceState(history.state, "", url);
    setOffsetState(next);
  };
  return [offset, setOffset];
}
