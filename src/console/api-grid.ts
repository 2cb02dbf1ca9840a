// The grid pages' API: `hone compare` experiment folders under the console's root (found by their experiment.json),
// and one experiment's live report: the finished cells' statistics, each planned cell × seed's state, the charts.
import { lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, Hono } from "hono";
import { groupChart } from "../compare/html.ts";
import { readCellFolder } from "../compare/read-cells.ts";
import { buildReport, type CellSummary } from "../compare/report.ts";
import { EXPERIMENT_FILE, type ExperimentManifest } from "../compare/run-experiment.ts";
import { stream } from "./api.ts";
import { isRegularFile } from "./files.ts";
import type { LiveHub } from "./live.ts";
import { findDirsHolding, runId } from "./run-index.ts";
import type { RunRegistry } from "./runs.ts";

const MAX_MANIFEST = 1 << 20;
const SKIP = new Set(["node_modules", ".git", "harnesses.git", "rollouts", "candidates", "best", "test"]);

/** Experiment folders (holding experiment.json) under `root`, up to `depth` levels down; links are not followed. */
export const findExperimentDirs = (root: string, depth = 3): string[] => findDirsHolding(root, EXPERIMENT_FILE, SKIP, depth);

/** The manifest as far as the page needs it; anything malformed reads as no manifest. */
function readManifest(dir: string): ExperimentManifest | undefined {
  const file = join(dir, EXPERIMENT_FILE);
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > MAX_MANIFEST) return undefined;
  try {
    const m = JSON.parse(readFileSync(file, "utf8")) as ExperimentManifest;
    if (m.format !== "hone-experiment/1" || !Array.isArray(m.planned) || typeof m.baseline !== "string") return undefined;
    // A cell × seed is a folder of the experiment's own: "<cell>/seed-<n>", never "../seed-1" (a folder beside it).
    const own = (p: unknown) => typeof p === "string" && /^[^/\\]+\/seed-[0-9]+$/.test(p) && !/^\.\.?\//.test(p);
    return { ...m, planned: m.planned.filter(own) };
  } catch {
    return undefined;
  }
}

type SeedState = "finished" | "started" | "waiting";
const stateOf = (dir: string, cell: string): SeedState =>
  isRegularFile(join(dir, cell, "cell.json")) ? "finished" : isRegularFile(join(dir, cell, "hone.db")) ? "started" : "waiting";

function experimentPage(root: string, dir: string, m: ExperimentManifest) {
  const seeds = m.planned.map((p) => ({ dir: p, run: runId(root, join(dir, p)), state: stateOf(dir, p) }));
  let report = null;
  let error: string | null = null;
  if (seeds.some((s) => s.state === "finished")) {
    try {
      const { cells, pending, failed } = readCellFolder(dir);
      const methods = new Set(cells.map((c) => c.method));
      report = buildReport(cells, { baseline: methods.has(m.baseline) ? m.baseline : [...methods][0], pending, failed });
    } catch (err) {
      error = (err as Error).message;
    }
  }
  const groups = new Map<string, CellSummary[]>();
  for (const c of report?.cells ?? [])
    groups.set(`${c.benchmark}+${c.harness}`, [...(groups.get(`${c.benchmark}+${c.harness}`) ?? []), c]);
  const charts = [...groups.values()].map((cells) => {
    const f = cells[0] as CellSummary;
    const comparisons = (report?.comparisons ?? []).filter((c) => c.benchmark === f.benchmark && c.harness === f.harness);
    return { benchmark: f.benchmark, harness: f.harness, ...groupChart(cells, comparisons) };
  });
  return { id: runId(root, dir), name: m.name, baseline: m.baseline, budget: m.budget, seeds, report, charts, error };
}

/** How often a followed experiment looks for cell × seed runs that started (a hone.db appeared). */
const FOLLOW_MS = 2000;

/**
 * Follows one experiment through the console's live hub: every planned cell × seed's run that has started (one
 * shared watcher per run directory, which also reports its cell.json), and every FOLLOW_MS the runs that started
 * since. Calls `send` with a fingerprint of the seeds' states and their runs' fingerprints whenever it changes;
 * returns the unsubscribe.
 */
export function watchExperiment(
  runs: RunRegistry,
  live: LiveHub,
  dir: string,
  m: ExperimentManifest,
  send: (fingerprint: string) => void,
): () => void {
  const follows = new Map<string, () => void>();
  const prints = new Map<string, string>();
  const ids = m.planned.map((p) => [p, runId(runs.root, join(dir, p))] as const);
  let last: string | undefined;
  const changed = () => {
    const now = JSON.stringify(ids.map(([p, id]) => [p, stateOf(dir, p), prints.get(id) ?? ""]));
    if (now === last) return;
    last = now;
    send(now);
  };
  const follow = () => {
    for (const [, id] of ids)
      if (!follows.has(id) && runs.dir(id))
        follows.set(
          id,
          live.watchRun(id, (fp) => {
            prints.set(id, fp);
            changed();
          }),
        );
    changed();
  };
  const timer = setInterval(follow, FOLLOW_MS);
  timer.unref();
  follow();
  return () => {
    clearInterval(timer);
    for (const unfollow of follows.values()) unfollow();
  };
}

export function gridRoutes(runs: RunRegistry, live: LiveHub): Hono {
  const root = runs.root;
  const api = new Hono();
  const lookup = () => new Map(findExperimentDirs(root).map((d) => [runId(root, d), d]));
  api.get("/experiments", (c) => {
    const items = [...lookup()].flatMap(([id, dir]) => {
      const m = readManifest(dir);
      if (!m) return [];
      const states = m.planned.map((p) => stateOf(dir, p));
      return [{ id, name: m.name, planned: states.length, finished: states.filter((s) => s === "finished").length }];
    });
    return c.json({ items });
  });
  api.get("/experiment", (c: Context) => {
    const id = c.req.query("id") ?? "";
    const dir = lookup().get(id); // ids are looked up, never used as paths
    const m = dir && readManifest(dir);
    if (!dir || !m) return c.json({ error: `no experiment named ${JSON.stringify(id)} under this console's folder` }, 404);
    return c.json(experimentPage(root, dir, m));
  });
  /** Server-sent events: an `update` whenever a cell × seed of the experiment starts, records, or finishes. */
  api.get("/experiment/events", (c: Context) => {
    const id = c.req.query("id") ?? "";
    const dir = lookup().get(id);
    const m = dir && readManifest(dir);
    if (!dir || !m) return c.json({ error: `no experiment named ${JSON.stringify(id)} under this console's folder` }, 404);
    return stream(c, (send) => watchExperiment(runs, live, dir, m, send));
  });
  return api;
}
