import { useCallback, useEffect, useRef, useState } from "react";

export async function getJson<T>(url: string): Promise<T> {
  const r = await fetch(url, { credentials: "same-origin" });
  const body = await r.json().catch(() => ({ error: `${r.status} ${r.statusText}` }));
  if (!r.ok) throw new Error((body as { error?: string }).error ?? `${r.status}`);
  return body as T;
}

export const runPath = (id: string) => `/api/runs/${encodeURIComponent(id)}`;

/**
 * Loads `url` and reloads it whenever the server-sent events at `eventsUrl` say the records changed. Data is
 * replaced in place (no loading state after the first load), so live pages do not jump.
 */
export function useLiveJson<T>(
  url: string | null,
  eventsUrl: string | null,
  reloadKey?: unknown,
): { data: T | null; error: string | null } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const seq = useRef(0);
  const load = useCallback(() => {
    if (!url) return;
    const mine = ++seq.current;
    getJson<T>(url)
      .then((d) => {
        if (mine === seq.current) {
          setData(d);
          setError(null);
        }
      })
      .catch((e: Error) => mine === seq.current && setError(e.message));
  }, [url]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new reloadKey (a parent's fresh data) loads again
  useEffect(() => {
    load();
    if (!eventsUrl) return;
    const source = new EventSource(eventsUrl);
    source.addEventListener("update", load);
    return () => source.close();
  }, [load, eventsUrl, reloadKey]);
  return { data, error };
}

/** Loads `url`, and again whenever `reloadKey` changes (a live parent page passes its own data). */
export function useJson<T>(url: string | null, reloadKey?: unknown) {
  return useLiveJson<T>(url, null, reloadKey);
}
