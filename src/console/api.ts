import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTwoFilesPatch } from "diff";
import { type Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { type IdentityParts, identityDifferences } from "../loop/identity.ts";
import { runReceipt } from "../loop/receipt.ts";
import { HarnessRepo } from "../store/git.ts";
import type { RunRegistry } from "./runs.ts";
import { resolveInside } from "./safe-path.ts";

const MAX_ARTIFACT_BYTES = 2 * 1024 * 1024;

function page(c: Context, defaultLimit = 100, maxLimit = 1000): { offset: number; limit: number } | null {
  const offset = Number(c.req.query("offset") ?? 0);
  const limit = Number(c.req.query("limit") ?? defaultLimit);
  if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(limit) || limit < 1 || limit > maxLimit) return null;
  return { offset, limit };
}

const badPage = (c: Context) => c.json({ error: "offset must be an integer ≥ 0 and limit an integer from 1 to 1000" }, 400);
const notFound = (c: Context, what: string) => c.json({ error: `${what} not found` }, 404);

/** The read-only JSON API over a folder of run directories, plus server-sent events for live pages. */
export function consoleApi(runs: RunRegistry, opts: { pollMs?: number } = {}): Hono {
  const api = new Hono();
  const pollMs = opts.pollMs ?? 500;

  api.get("/runs", (c) => {
    const p = page(c);
    if (!p) return badPage(c);
    const ids = runs.ids();
    const items = ids.slice(p.offset, p.offset + p.limit).map((id) => {
      const overview = runs.reader(id)?.overview();
      if (!overview) return { id, status: "unreadable" };
      const { config: _config, ...rest } = overview;
      return { id, ...rest };
    });
    return c.json({ total: ids.length, ...p, items });
  });

  api.get("/runs/:run", (c) => {
    const data = runs.reader(c.req.param("run"))?.runPage();
    return data ? c.json({ id: c.req.param("run"), ...data }) : notFound(c, "run");
  });

  api.get("/runs/:run/receipt", (c) => {
    const dir = runs.dir(c.req.param("run"));
    return dir ? c.json(runReceipt(dir)) : notFound(c, "run");
  });

  api.get("/runs/:run/candidates/:cid", async (c) => {
    const reader = runs.reader(c.req.param("run"));
    const candidate = reader?.candidate(c.req.param("cid"));
    if (!reader || !candidate) return notFound(c, "candidate");
    const sha = candidate.commit_sha;
    const files = sha ? await new HarnessRepo(join(reader.dir, "harnesses.git")).read.files(sha) : [];
    return c.json({ ...candidate, files });
  });

  api.get("/runs/:run/candidates/:cid/file", async (c) => {
    const reader = runs.reader(c.req.param("run"));
    const sha = reader?.commitOf(c.req.param("cid"));
    const path = c.req.query("path") ?? "";
    if (!reader || !sha) return notFound(c, "candidate");
    const repo = new HarnessRepo(join(reader.dir, "harnesses.git"));
    if (!(await repo.read.files(sha)).includes(path)) return notFound(c, `file ${JSON.stringify(path)}`);
    return c.json({ path, content: await repo.read.show(sha, path) });
  });

  api.get("/runs/:run/diff", async (c) => {
    const reader = runs.reader(c.req.param("run"));
    if (!reader) return notFound(c, "run");
    const b = c.req.query("b") ?? "";
    const a = c.req.query("a") ?? ((reader.candidate(b)?.parent as string | null) || "");
    const [shaA, shaB] = [reader.commitOf(a), reader.commitOf(b)];
    if (!shaA || !shaB)
      return c.json({ error: "both candidates must exist and have a harness (gate-refused ones have none)" }, 404);
    const diff = await new HarnessRepo(join(reader.dir, "harnesses.git")).read.diff(shaA, shaB);
    return c.json({ a, b, diff });
  });

  api.get("/runs/:run/rollouts", (c) => {
    const p = page(c);
    if (!p) return badPage(c);
    const reader = runs.reader(c.req.param("run"));
    return reader ? c.json(reader.rollouts(p.offset, p.limit)) : notFound(c, "run");
  });

  api.get("/runs/:run/rollouts/:rid", (c) => {
    const rollout = runs.reader(c.req.param("run"))?.rollout(c.req.param("rid"));
    return rollout ? c.json(rollout) : notFound(c, "rollout");
  });

  api.get("/runs/:run/rollouts/:rid/trajectory", (c) => {
    const p = page(c, 500, 5000);
    if (!p) return badPage(c);
    const trajectory = runs.reader(c.req.param("run"))?.trajectory(c.req.param("rid"), p.offset, p.limit);
    return trajectory ? c.json(trajectory) : notFound(c, "trajectory");
  });

  api.get("/runs/:run/rollouts/:rid/program-diff", (c) => {
    const dir = runs.dir(c.req.param("run"));
    const [from, to] = [Number(c.req.query("from")), Number(c.req.query("to"))];
    if (!dir || !Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to < 1) return notFound(c, "programs");
    const name = (i: number) => `rollouts/${c.req.param("rid")}/programs/${String(i).padStart(4, "0")}.py`;
    const [pathA, pathB] = [resolveInside(dir, name(from)), resolveInside(dir, name(to))];
    if (!pathA || !pathB) return notFound(c, "programs");
    const diff = createTwoFilesPatch(name(from), name(to), readFileSync(pathA, "utf8"), readFileSync(pathB, "utf8"));
    return c.json({ from, to, diff });
  });

  api.get("/runs/:run/artifact", (c) => {
    const dir = runs.dir(c.req.param("run"));
    const path = dir ? resolveInside(dir, c.req.query("path") ?? "") : null;
    if (!path) return notFound(c, "artifact");
    const content = readFileSync(path);
    if (content.length > MAX_ARTIFACT_BYTES)
      return c.json({ error: "artifact larger than 2 MiB; open it from the run folder" }, 413);
    return c.text(content.toString("utf8"));
  });

  api.get("/compare", (c) => {
    const ids = c.req.queries("run") ?? [];
    if (ids.length < 2) return c.json({ error: "name at least two runs: /api/compare?run=a&run=b" }, 400);
    const entries: { id: string; rounds: unknown[]; direction: string; receipt: unknown; identity: IdentityParts | null }[] = [];
    for (const id of ids) {
      const reader = runs.reader(id);
      const dir = runs.dir(id);
      const data = reader?.runPage();
      if (!reader || !dir || !data) return notFound(c, `run ${JSON.stringify(id)}`);
      const identity = (reader.rollout("r00-seed")?.identity ?? null) as IdentityParts | null;
      entries.push({ id, rounds: data.rounds, direction: data.direction, receipt: runReceipt(dir), identity });
    }
    const base = entries[0]?.identity;
    const warnings = entries.slice(1).flatMap((e) => {
      if (!base || !e.identity) return [`${e.id}: no measurement identity recorded; the runs may not be comparable`];
      return identityDifferences(base, e.identity)
        .filter((d) => !d.startsWith("sampling.seed"))
        .map((d) => `${entries[0]?.id} vs ${e.id}: ${d}`);
    });
    return c.json({ runs: entries, warnings });
  });

  const live = (c: Context, fingerprint: () => string | undefined) =>
    streamSSE(c, async (stream) => {
      let last = "";
      let closed = false;
      stream.onAbort(() => {
        closed = true;
      });
      while (!closed) {
        const now = fingerprint();
        if (now !== undefined && now !== last) {
          last = now;
          await stream.writeSSE({ event: "update", data: now });
        }
        await stream.sleep(pollMs);
      }
    });

  api.get("/runs/:run/events", (c) => {
    const id = c.req.param("run");
    if (!runs.dir(id)) return notFound(c, "run");
    return live(c, () => runs.reader(id)?.fingerprint());
  });

  api.get("/events", (c) => live(c, () => JSON.stringify(runs.ids().map((id) => [id, runs.reader(id)?.fingerprint()]))));

  return api;
}

export const consoleAssetsReady = (distDir: string) => existsSync(join(distDir, "index.html"));
