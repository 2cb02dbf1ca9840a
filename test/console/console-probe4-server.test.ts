import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsole } from "../../src/console/server.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

const root = tempDir("hone-console-probe4-server-");
const token = "a-long-random-secret-for-the-probe";
let server: Awaited<ReturnType<typeof startConsole>>;

beforeAll(async () => {
  await writeSyntheticRun(join(root, "good"), { rounds: 1, perRound: 2 });
  // Another program's database named hone.db, with a table named runs (not hone's).
  mkdirSync(join(root, "other"));
  const other = new Database(join(root, "other", "hone.db"));
  other.exec("CREATE TABLE runs (name TEXT); INSERT INTO runs VALUES ('x');");
  other.close();
  // A hone.db whose candidates table lacks a column this hone reads (another version's, or edited by hand).
  mkdirSync(join(root, "older"));
  copyFileSync(join(root, "good", "hone.db"), join(root, "older", "hone.db"));
  const older = new Database(join(root, "older", "hone.db"));
  older.exec("ALTER TABLE candidates DROP COLUMN repaired");
  older.close();
  server = await startConsole({ root, port: 0, token });
});

afterAll(async () => {
  await server?.close();
});

const api = (path: string) => fetch(`${server.url}/api/${path}`, { headers: { authorization: `Bearer ${token}` } });

describe("hone view's server", () => {
  it("sends a page opened with its token to that page of this console, never to another site", async () => {
    for (const [path, to] of [
      ["//evil.example/x", "/evil.example/x"],
      ["/run/good", "/run/good"],
    ]) {
      const r = await fetch(`${server.url}${path}?token=${token}`, { redirect: "manual" });
      expect(r.status).toBe(302);
      expect(r.headers.get("location")).toBe(to);
    }
  });

  it("lists another program's hone.db as unreadable and answers its pages 404 saying so", async () => {
    const list = (await (await api("runs")).json()) as { items: { id: string; status?: string }[] };
    expect(list.items.find((i) => i.id === "other")?.status).toBe("unreadable");
    for (const page of ["runs/other", "runs/other/candidates", "runs/other/lineage", "runs/other/receipt"]) {
      const r = await api(page);
      expect(r.status, page).toBe(404);
      expect(((await r.json()) as { error: string }).error, page).toMatch(/"other" that hone can read: its hone\.db is damaged/);
    }
    const gone = (await (await api("runs/nothing-here")).json()) as { error: string };
    expect(gone.error).toMatch(/moved or deleted/);
  });

  it("answers a page its hone.db cannot give with a JSON error naming what failed", async () => {
    const r = await api("runs/older/candidates");
    expect(r.status).toBe(500);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    expect(((await r.json()) as { error: string }).error).toMatch(/\/api\/runs\/older\/candidates: no such column: repaired/);
    expect((await api("runs/good/candidates")).status).toBe(200);
  });
});
