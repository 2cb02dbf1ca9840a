import { join } from "node:path";
import { type Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { type IdentityParts, identityDifferences } from "../loop/identity.ts";
import { runReceipt } from "../loop/receipt.ts";
import { fileRoutes } from "./api-files.ts";
import { HarnessReader, MAX_GIT_BYTES } from "./harness-read.ts";
import type { LiveHub } from "./live.ts";
import { badRequest, page } from "./params.ts";
import type { RunReader } from "./run-reader.ts";
import type { RunRegistry } from "./runs.ts";

const notFound = (c: Context, what: string) => c.json({ error: `${what} not found` }, 404);
const missing = (c: Context, id: string) =>
  c.json({ error: `no run named ${JSON.stringify(id)} under this console's folder; it may have been moved or deleted` }, 404);
/** A run's harness versions, read without its repository's config (a run folder is untrusted). */
const harnesses = (reader: RunReader) => new HarnessReader(join(reader.dir, "harnesses.git"));
const json = (c: Context, text: string) => c.body(text, 200, { "content-type": "application/json; charset=utf-8" });

/** A server-sent event stream fed by the shared hub: no timer or query per client. */
export const stream = (c: Context, subscribe: (send: (fingerprint: string) => void) => () => void) =>
  streamSSE(c, async (s) => {
    let unsubscribe = () => {};
    const closed = new Promise<void>((resolve) => s.onAbort(resolve));
    unsubscribe = subscribe((fingerprint) => void s.writeSSE({ event: "update", data: fingerprint }).catch(() => {}));
    await closed;
    unsubscribe();
  });

/** The read-only JSON API over a folder of run directories, plus server-sent events for live pages. */
export function consoleApi(runs: RunRegistry, live: LiveHub): Hono {
  const api = new Hono();
  /** A run with no reader: gone, or there with a hone.db hone cannot read (said so, not "moved or deleted"). */
  const noRun = (c: Context, id: string) =>
    runs.dir(id)
      ? c.json(
          {
            error: `no run named ${JSON.stringify(id)} that hone can read: its hone.db is damaged, half copied, being created, or another program's`,
          },
          404,
        )
      : missing(c, id);

  api.get("/runs", (c) => {
    const p = page(c);
    if ("error" in p) return badRequest(c, p.error);
    const { offset, limit } = p.value;
    const ids = runs.ids();
    const items = ids.slice(offset, offset + limit).map((id) => {
      let overview: ReturnType<RunReader["overview"]> | undefined;
      try {
        overview = runs.reader(id)?.overview();
      } catch {
        overview = undefined; // one run's records SQLite cannot read never take the others' list down
      }
      if (!overview) return { id, status: "unreadable" };
      const { config: _config, ...rest } = overview;
      return { id, ...rest };
    });
    return c.json({ total: ids.length, offset, limit, items });
  });

  api.get("/runs/:run", (c) => {
    const id = c.req.param("run");
    const text = runs.reader(id)?.runPageJson(id);
    return text ? json(c, text) : noRun(c, id);
  });

  api.get("/runs/:run/candidates", (c) => {
    const p = page(c);
    if ("error" in p) return badRequest(c, p.error);
    const reader = runs.reader(c.req.param("run"));
    if (!reader) return noRun(c, c.req.param("run"));
    return c.json(reader.candidates(p.value.offset, p.value.limit, (c.req.query("q") ?? "").slice(0, 200)));
  });

  api.get("/runs/:run/lineage", (c) => {
    const p = page(c, 200, 1000);
    if ("error" in p) return badRequest(c, p.error);
    const reader = runs.reader(c.req.param("run"));
    if (!reader) return noRun(c, c.req.param("run"));
    const data = reader.lineagePage(c.req.query("node") || null, p.value.offset, p.value.limit);
    return data ? c.json(data) : notFound(c, `candidate ${JSON.stringify(c.req.query("node"))}`);
  });

  api.get("/runs/:run/receipt", (c) => {
    // Through the registry's reader: only a hone.db SQLite can read (and not a FIFO) is opened for the receipt.
    const reader = runs.reader(c.req.param("run"));
    if (!reader) return noRun(c, c.req.param("run"));
    return c.json(runReceipt(reader.dir));
  });

  api.get("/runs/:run/candidates/:cid", async (c) => {
    const reader = runs.reader(c.req.param("run"));
    if (!reader) return noRun(c, c.req.param("run"));
    const candidate = reader.candidate(c.req.param("cid"));
    if (!candidate) return notFound(c, `candidate ${JSON.stringify(c.req.param("cid"))}`);
    const sha = candidate.commit_sha as string | null;
    const files = sha ? ((await harnesses(reader).files(sha)) ?? []) : [];
    return c.json({ ...candidate, files });
  });

  api.get("/runs/:run/candidates/:cid/file", async (c) => {
    const reader = runs.reader(c.req.param("run"));
    if (!reader) return noRun(c, c.req.param("run"));
    const sha = reader.commitOf(c.req.param("cid"));
    const path = c.req.query("path") ?? "";
    if (!sha) return notFound(c, `candidate ${JSON.stringify(c.req.param("cid"))} with a harness`);
    const repo = harnesses(reader);
    const shown = (await repo.files(sha))?.includes(path) ? await repo.show(sha, path) : null;
    if (!shown) return notFound(c, `file ${JSON.stringify(path)}`);
    return c.json({ path, content: shown.text, ...(shown.truncated ? { truncated: MAX_GIT_BYTES } : {}) });
  });

  api.get("/runs/:run/diff", async (c) => {
    const reader = runs.reader(c.req.param("run"));
    if (!reader) return noRun(c, c.req.param("run"));
    const b = c.req.query("b") ?? "";
    const a = c.req.query("a") ?? ((reader.candidate(b)?.parent as string | null) || "");
    const [shaA, shaB] = [reader.commitOf(a), reader.commitOf(b)];
    if (!shaA || !shaB)
      return c.json({ error: "both candidates must exist and have a harness (gate-refused ones have none)" }, 404);
    const diff = await harnesses(reader).diff(shaA, shaB);
    if (!diff) return c.json({ error: "these candidates' harness versions are not in this run's harnesses.git" }, 404);
    return c.json({ a, b, diff: diff.text, ...(diff.truncated ? { truncated: MAX_GIT_BYTES } : {}) });
  });

  api.get("/runs/:run/rollouts", (c) => {
    const p = page(c);
    if ("error" in p) return badRequest(c, p.error);
    const reader = runs.reader(c.req.param("run"));
    return reader ? c.json(reader.rollouts(p.value.offset, p.value.limit)) : noRun(c, c.req.param("run"));
  });

  api.get("/runs/:run/tasks", (c) => {
    const p = page(c);
    if ("error" in p) return badRequest(c, p.error);
    const reader = runs.reader(c.req.param("run"));
    return reader ? c.json(reader.taskResults(p.value.offset, p.value.limit)) : noRun(c, c.req.param("run"));
  });

  api.get("/runs/:run/rollouts/:rid", (c) => {
    const reader = runs.reader(c.req.param("run"));
    if (!reader) return noRun(c, c.req.param("run"));
    const rollout = reader.rollout(c.req.param("rid"));
    return rollout ? c.json(rollout) : notFound(c, `rollout ${JSON.stringify(c.req.param("rid"))}`);
  });

  api.route("/", fileRoutes(runs));

  api.get("/compare", (c) => {
    const ids = c.req.queries("run") ?? [];
    if (ids.length < 2) return c.json({ error: "name at least two runs: /api/compare?run=a&run=b" }, 400);
    if (ids.length > 12) return c.json({ error: "compare at most 12 runs at once" }, 400);
    const entries: { id: string; rounds: unknown[]; direction: string; receipt: unknown; identity: IdentityParts | null }[] = [];
    for (const id of ids) {
      const reader = runs.reader(id);
      const overview = reader?.overview();
      if (!reader || !overview) return noRun(c, id);
      const identity = reader.firstIdentity() as IdentityParts | null;
      entries.push({ id, rounds: reader.rounds(), direction: overview.direction, receipt: runReceipt(reader.dir), identity });
    }
    const base = entries[0]?.identity;
    const missing = entries
      .filter((e) => !e.identity)
      .map((e) => `${e.id}: no measurement identity recorded; the runs may not be comparable`);
    const differences = entries.slice(1).flatMap((e) =>
      base && e.identity
        ? identityDifferences(base, e.identity)
            .filter((d) => !d.startsWith("sampling.seed"))
            .map((d) => `${entries[0]?.id} vs ${e.id}: ${d}`)
        : [],
    );
    const warnings = [...missing, ...differences];
    return c.json({ runs: entries, warnings });
  });

  api.get("/runs/:run/events", (c) => {
    const id = c.req.param("run");
    if (!runs.dir(id)) return noRun(c, id);
    return stream(c, (send) => live.watchRun(id, send));
  });

  api.get("/events", (c) => stream(c, (send) => live.watchList(send)));

  return api;
}
