import { createTwoFilesPatch } from "diff";
import { type Context, Hono } from "hono";
import { MAX_FILE_BYTES, Refused, readHead, readLines } from "./files.ts";
import { badRequest, page, whole } from "./params.ts";
import type { RunRegistry } from "./runs.ts";
import { resolveInside } from "./safe-path.ts";

/** Programs larger than this are not diffed in the console (a diff is quadratic at worst). */
const MAX_DIFF_BYTES = 256 * 1024;
const ROLLOUT_ID = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * The deepest a trajectory event may nest and still be served as itself. JSON.parse takes any depth, but sending the
 * page back (JSON.stringify) and drawing it are recursive: one line of 100,000 nested arrays (200 KB, under the line
 * cap) made the whole trajectory page an error 500. hone writes nothing near this deep.
 */
const MAX_DEPTH = 256;

/** Whether JSON text nests arrays and objects deeper than `max`, read in one pass (brackets inside strings skipped). */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // a backslash: the next character is escaped
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

const refused = (c: Context, e: unknown) => {
  if (e instanceof Refused) return c.json({ error: e.message }, e.status);
  throw e;
};

/**
 * The routes that read files of a run folder: artifacts, program diffs, trajectories. Every path is confined to
 * the run folder (links resolved), only regular files are opened, never blocking, and never more than a cap.
 */
export function fileRoutes(runs: RunRegistry): Hono {
  const api = new Hono();

  /** A path from a URL inside the run folder, or a 404 answer naming what was asked. */
  const inside = (c: Context, rel: string, what: string): string | Response => {
    const dir = runs.dir(c.req.param("run") as string);
    if (!dir) return c.json({ error: `no run named ${JSON.stringify(c.req.param("run"))} here` }, 404);
    return resolveInside(dir, rel) ?? c.json({ error: `${what} not found in this run's folder` }, 404);
  };

  /** A file of a rollout's folder (`rollouts/<id>/`, or the run folder itself for `hone run`), relative to the run. */
  const inRollout = (c: Context, rid: string, rest: string): string => {
    const reader = runs.reader(c.req.param("run") as string);
    return `${reader ? reader.rolloutFolder(rid) : `rollouts/${rid}/`}${rest}`;
  };

  const artifact = async (c: Context, rel: string) => {
    const path = inside(c, rel, `artifact ${JSON.stringify(rel)}`);
    if (typeof path !== "string") return path;
    try {
      const { bytes, size, truncated } = await readHead(path, rel);
      const headers: Record<string, string> = { "content-type": "text/plain; charset=utf-8", "x-hone-size": String(size) };
      if (truncated) headers["x-hone-truncated"] = `first ${MAX_FILE_BYTES} bytes of ${size}; open the file from the run folder`;
      return c.body(new Uint8Array(bytes), 200, headers);
    } catch (e) {
      return refused(c, e);
    }
  };

  api.get("/runs/:run/artifact", (c) => artifact(c, c.req.query("path") ?? ""));

  api.get("/runs/:run/rollouts/:rid/artifact", (c) => {
    const rid = c.req.param("rid");
    if (!ROLLOUT_ID.test(rid)) return c.json({ error: "no such rollout" }, 404);
    return artifact(c, inRollout(c, rid, c.req.query("path") ?? ""));
  });

  api.get("/runs/:run/rollouts/:rid/program-diff", async (c) => {
    const rid = c.req.param("rid");
    const from = whole(c.req.query("from"), "from", { min: 1, max: 1_000_000 });
    const to = whole(c.req.query("to"), "to", { min: 1, max: 1_000_000 });
    if ("error" in from) return badRequest(c, from.error);
    if ("error" in to) return badRequest(c, to.error);
    if (!ROLLOUT_ID.test(rid)) return c.json({ error: "no such rollout" }, 404);
    const name = (i: number) => inRollout(c, rid, `programs/${String(i).padStart(4, "0")}.py`);
    const texts: string[] = [];
    for (const i of [from.value, to.value]) {
      const path = inside(c, name(i), `program ${i}`);
      if (typeof path !== "string") return path;
      try {
        const { bytes, truncated } = await readHead(path, name(i), MAX_DIFF_BYTES);
        if (truncated) return c.json({ error: `${name(i)} is larger than 256 KiB; diff it from the run folder` }, 413);
        texts.push(bytes.toString("utf8"));
      } catch (e) {
        return refused(c, e);
      }
    }
    const diff = createTwoFilesPatch(
      name(from.value),
      name(to.value),
      texts[0] as string,
      texts[1] as string,
      undefined,
      undefined,
      {
        timeout: 500,
      },
    );
    if (diff === undefined)
      return c.json({ error: "these programs differ too much to diff here; diff them from the run folder" }, 413);
    return c.json({ from: from.value, to: to.value, diff });
  });

  api.get("/runs/:run/rollouts/:rid/trajectory", async (c) => {
    const p = page(c, 500, 5000);
    if ("error" in p) return badRequest(c, p.error);
    const rid = c.req.param("rid");
    if (!ROLLOUT_ID.test(rid)) return c.json({ error: "no such rollout" }, 404);
    const rel = inRollout(c, rid, "trajectory.jsonl");
    const path = inside(c, rel, `the trajectory of rollout ${rid}`);
    if (typeof path !== "string") return path;
    try {
      const { total, lines, cut } = await readLines(path, rel, p.value);
      const events = lines.map((line, i) => {
        const bytes = cut.get(i);
        if (bytes !== undefined) return { type: "unreadable", raw: line, bytes, why: "line longer than 1 MiB" };
        if (nestedDeeperThan(line, MAX_DEPTH))
          return { type: "unreadable", raw: line.slice(0, 500), why: `nested deeper than ${MAX_DEPTH} levels` };
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          return { type: "unreadable", raw: line.slice(0, 500) };
        }
      });
      return c.json({ total, ...p.value, events });
    } catch (e) {
      return refused(c, e);
    }
  });

  return api;
}
