import { cpSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunRegistry } from "../../src/console/runs.ts";
import { consoleApp } from "../../src/console/server.ts";
import { openDb } from "../../src/store/db.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// The run page at scale: a paginated API whose answers match what the records say, with or without the indexes
// a run written by an older hone lacks.
const root = tempDir("hone-console-page-");
const NEW_INDEXES = ["rollouts_candidate", "candidates_commit", "candidates_parent"];
let registry: RunRegistry;
let app: ReturnType<typeof consoleApp>;

interface Item {
  id: string;
  parent: string | null;
  children: number;
  score: number | null;
  round: number;
}

async function get(path: string) {
  const r = await app.request(path, { headers: { host: "127.0.0.1" } });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> & { items: Item[]; total: number } };
}

/** The parent rule, straight from the records: the lowest id holding the commit a candidate was proposed from. */
function expectedParents(dir: string): Map<string, string | null> {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const rows = db
    .prepare(`SELECT c.id, (SELECT MIN(p.id) FROM candidates p WHERE p.commit_sha = c.parent_commit) AS holder FROM candidates c`)
    .all() as { id: string; holder: string | null }[];
  db.close();
  return new Map(rows.map((r) => [r.id, r.holder === r.id ? null : r.holder]));
}

/** Walks the whole lineage through the API, a page at a time, the way the page's "show more" buttons do. */
async function walkLineage(run: string, pageSize: number): Promise<Item[]> {
  const seen: Item[] = [];
  const top = await get(`/api/runs/${run}/lineage?limit=${pageSize}`);
  seen.push(...top.json.items);
  let roots = seen.filter((n) => n.parent === null).length;
  while (roots < top.json.total) {
    const more = await get(`/api/runs/${run}/lineage?offset=${roots}&limit=${pageSize}`);
    seen.push(...more.json.items);
    roots += more.json.items.length;
  }
  for (let k = 0; k < seen.length; k++) {
    const node = seen[k] as Item;
    let loaded = seen.filter((n) => n.parent === node.id).length;
    while (loaded < node.children) {
      const page = await get(`/api/runs/${run}/lineage?node=${node.id}&offset=${loaded}&limit=${pageSize}`);
      expect(page.json.items.length, `children of ${node.id}`).toBeGreaterThan(0);
      seen.push(...page.json.items);
      loaded += page.json.items.length;
    }
  }
  return seen;
}

beforeAll(async () => {
  await writeSyntheticRun(join(root, "deep"), { rounds: 12, perRound: 9, refuseEvery: 5, deep: true });
  // The same run as an older hone wrote it: without the indexes this version adds.
  cpSync(join(root, "deep"), join(root, "old"), { recursive: true });
  const db = new Database(join(root, "old", "hone.db"));
  for (const name of NEW_INDEXES) db.exec(`DROP INDEX IF EXISTS ${name}`);
  db.close();
  registry = new RunRegistry(root, 0);
  app = consoleApp(registry, { root });
});

afterAll(() => registry.close());

describe("run page at scale", () => {
  for (const run of ["deep", "old"])
    it(`walks the lineage page by page and finds every candidate once under its real parent (${run})`, async () => {
      const parents = expectedParents(join(root, run));
      const seen = await walkLineage(run, 7);
      expect(seen.map((n) => n.id).sort()).toEqual([...parents.keys()].sort());
      for (const n of seen) expect(n.parent, n.id).toBe(parents.get(n.id));
      for (const n of seen) expect(n.children, n.id).toBe([...parents.values()].filter((p) => p === n.id).length);
      expect(new Set(seen.map((n) => n.parent)).size).toBeGreaterThan(2); // more than one level below the seed
    });

  it("pages the round table newest first without gaps or repeats, and finds candidates by id", async () => {
    const all: Item[] = [];
    for (let offset = 0; ; offset += 10) {
      const page = await get(`/api/runs/deep/candidates?offset=${offset}&limit=10`);
      all.push(...page.json.items);
      if (page.json.items.length < 10) break;
    }
    expect(all.map((c) => c.id).sort()).toEqual([...expectedParents(join(root, "deep")).keys()].sort());
    expect(all.map((c) => c.round)).toEqual([...all.map((c) => c.round)].sort((a, b) => b - a));
    const found = await get("/api/runs/deep/candidates?q=r07-");
    expect(found.json.total).toBe(9);
    expect(found.json.items.every((c) => c.id.startsWith("r07-"))).toBe(true);
  });

  it("gives the curve one entry per candidate, with the scores the candidates table holds", async () => {
    const page = await get("/api/runs/deep");
    const curve = page.json.curve as { round: number[]; slot: number[]; score: (number | null)[]; kind: number[] };
    const db = new Database(join(root, "deep", "hone.db"), { readonly: true });
    const rows = db.prepare("SELECT round, slot, score, status FROM candidates").all() as {
      round: number;
      slot: number;
      score: number | null;
      status: string;
    }[];
    db.close();
    const key = (r: number, s: number) => `${r}/${s}`;
    const got = new Map(curve.round.map((r, i) => [key(r, curve.slot[i] as number), [curve.score[i], curve.kind[i]]]));
    expect(got.size).toBe(rows.length);
    for (const r of rows) {
      const kind = r.score !== null ? 1 : r.status === "seed" ? 0 : 2;
      expect(got.get(key(r.round, r.slot)), key(r.round, r.slot)).toEqual([r.score, kind]);
    }
  });

  it("answers the same with and without the new indexes", async () => {
    for (const path of ["", "/candidates?offset=5&limit=20", "/lineage?limit=30", "/candidates/r04-k2"]) {
      const [a, b] = [await get(`/api/runs/deep${path}`), await get(`/api/runs/old${path}`)];
      const { id: _a, ...x } = a.json;
      const { id: _b, ...y } = b.json;
      expect(y, path).toEqual(x);
    }
  });

  it("gives a run directory written before these indexes its indexes when hone opens it read-write", () => {
    const dir = tempDir();
    cpSync(join(root, "old"), dir, { recursive: true });
    const names = () => {
      const db = new Database(join(dir, "hone.db"), { readonly: true });
      const rows = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all() as { name: string }[];
      db.close();
      return rows.map((r) => r.name);
    };
    expect(names()).not.toContain("rollouts_candidate");
    openDb(join(dir, "hone.db")).close();
    expect(names()).toEqual(expect.arrayContaining(NEW_INDEXES));
    const db = new Database(join(dir, "hone.db"), { readonly: true });
    const plan = db.prepare("EXPLAIN QUERY PLAN SELECT id FROM rollouts WHERE candidate_id = ?").all("r01-k0") as {
      detail: string;
    }[];
    db.close();
    expect(plan.map((p) => p.detail).join(" ")).toMatch(/USING (COVERING )?INDEX rollouts_candidate/);
  });
});
