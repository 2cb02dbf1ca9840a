// The grid pages' API: `hone compare` experiment folders under the console's root (found by their experiment.json),
// and one experiment's live report: the finished cells' statistics, each planned cell × seed's state, the charts.
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, Hono } from "hono";
import { groupChart } from "../compare/html.ts";
import { readCellFolder } from "../compare/read-cells.ts";
import { buildReport, type CellSummary } from "../compare/report.ts";
import { EXPERIMENT_FILE, type ExperimentManifest } from "../compare/run-experiment.ts";
import { isRegularFile } from "./files.ts";
import { runId } from "./run-index.ts";

const MAX_MANIFEST = 1 << 20;
const SKIP = new Set(["node_modules", ".git", "harnesses.git", "rollouts", "candidates", "best", "test"]);

/** Experiment folders (holding experiment.json) under `root`, up to `depth` levels down; links are not followed. */
export function findExperimentDirs(root: string, depth = 3): string[] {
  const found: string[] = [];
  const walk = (dir: string, level: number) => {
    if (isRegularFile(join(dir, EXPERIMENT_FILE))) {
      found.push(dir);
      return;
    }
    if (level >= depth) return;
    let entries: import("node:fs").Dirent[] = [];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries)
      if (e.isDirectory() && !SKIP.has(e.name) && !e.name.startsWith(".")) walk(join(dir, e.name), level + 1);
  };
  walk(root, 0);
  return found.sort();
}

/** The manifest as far as the page needs it; anything malformed reads as no manifest. */
function readManifest(dir: string): ExperimentManifest | undefined {
  const file = join(dir, EXPERIMENT_FILE);
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > MAX_MANIFEST) return undefined;
  try {
    const m = JSON.parse(readFileSync(file, "utf8")) as ExperimentManifest;
    if (m.format !== "hone-experiment/1" || !Array.isArray(m.planned) || typeof m.baseline !== "string") return undefined;
    return { ...m, planned: m.planned.filter((p) => typeof p === "string" && /^[^/]+\/seed-[0-9]+$/.test(p)) };
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
      const { cells, pending } = readCellFolder(dir);
      const methods = new Set(cells.map((c) => c.method));
      report = buildReport(cells, { baseline: methods.has(m.baseline) ? m.baseline : [...methods][0], pending });
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

export function gridRoutes(root: string): Hono {
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
  return api;
}
