import { HoneError } from "../../errors.ts";
import { withoutPassword } from "../../secret-url.ts";
import { BENCHMARKS, dataDir, fetchDataset, isFetched, splitsOf } from "../../task/qa/benchmarks.ts";

/** What `hone datasets` shows and says, with the benchmark registry: loaded by datasets.ts's actions only. */
export { BENCHMARKS, dataDir, fetchDataset };

/** One benchmark as `hone datasets` shows it. */
export function describe(id: string, root: string) {
  const b = BENCHMARKS[id];
  if (!b) throw new Error(id);
  return {
    id: b.id,
    title: b.title,
    splits: splitsOf(b),
    sizes: b.sizes,
    metrics: b.scorer.metrics,
    licence: b.licence,
    homepage: b.homepage,
    files: b.files.map((f) => ({ name: f.name, url: f.url, sha256: f.sha256 ?? null })),
    pinned: b.files.every((f) => f.sha256),
    fetched: isFetched(b, root),
  };
}

/** A download that could not connect says what to do: use a mirror (--base-url), or check the mirror given. */
export function explainFetchFailure(err: unknown, id: string, baseUrl: string | undefined): unknown {
  if (!(err instanceof HoneError) || err.exit !== "endpoint") return err;
  const files = (BENCHMARKS[id]?.files ?? []).map((f) => f.name).join(", ");
  const hint = baseUrl
    ? `is the mirror ${withoutPassword(baseUrl)} up, and does it serve ${files}?`
    : `without a network here, put ${files} on a server you can reach and pass --base-url <its URL> (the sha256 is still checked)`;
  return new HoneError("endpoint", `${err.message}; ${hint}`);
}
