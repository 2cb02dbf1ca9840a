import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A run folder handed over by someone else may hold a damaged hone.db. `hone replay` refuses one naming it (exit 2);
// `hone receipt`, `hone log` and `hone diff` must do the same, not report "internal error (a bug)".
describe("newcomer probe 2: receipt, log and diff of a damaged run folder", () => {
  const root = tempDir();
  const run = join(root, "run");
  const folder = (name: string, db: (path: string) => void) => {
    const dir = join(root, name);
    mkdirSync(dir);
    db(join(dir, "hone.db"));
    return dir;
  };
  let cases: Record<string, string>;

  beforeAll(async () => {
    const r = await hone(["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "2", "--out", run]);
    expect(r.code, r.stderr).toBe(0);
    const whole = readFileSync(join(run, "hone.db"));
    cases = {
      "not a database": folder("garbage", (p) => writeFileSync(p, "not a database\n")),
      truncated: folder("truncated", (p) => writeFileSync(p, whole.subarray(0, 20_000))),
      "settings not JSON": folder("config", (p) => {
        copyFileSync(join(run, "hone.db"), p);
        const db = new Database(p);
        db.prepare("UPDATE runs SET config = 'not json'").run();
        db.close();
      }),
      "another database": folder("other", (p) => {
        const db = new Database(p);
        db.exec("CREATE TABLE notes (text TEXT)");
        db.close();
      }),
    };
  }, 120_000);

  it("each is refused with exit 2 naming the file, by receipt, log and diff", async () => {
    for (const [what, dir] of Object.entries(cases))
      for (const args of [
        ["receipt", dir],
        ["receipt", dir, "--json"],
        ["log", dir],
        ["diff", dir, "r00-seed"],
      ]) {
        // log and diff never read the stored settings, so only the receipt is refused for them.
        if (what === "settings not JSON" && args[0] !== "receipt") continue;
        const r = await hone(args);
        expect(r.stderr, `${args.join(" ")} (${what})`).not.toMatch(/internal error/);
        expect(r.code, `${args.join(" ")} (${what}): ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(join(dir, "hone.db"));
        expect(r.stdout).toBe("");
      }
  }, 120_000);

  it("a hone.db whose runs table is empty is named as holding no run", async () => {
    const dir = folder("empty", (p) => {
      copyFileSync(join(run, "hone.db"), p);
      const db = new Database(p);
      db.prepare("DELETE FROM runs").run();
      db.close();
    });
    const r = await hone(["receipt", dir]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${join(dir, "hone.db")} holds no run`);
  });

  it("the sound run still has its receipt and log", async () => {
    expect((await hone(["receipt", run])).stdout).toMatch(/^run\s+run, finished/);
    expect((await hone(["log", run])).code).toBe(0);
  });
});

// A request cache file SQLite cannot read makes every run and `hone cache clear` refuse it; the message must give the
// way out that works (remove the file), not only "a writable folder", which it already is.
describe("newcomer probe 2: a damaged request cache", () => {
  it("cache stats and clear name the file as damaged and say to remove it (exit 2)", async () => {
    const dir = tempDir();
    const path = join(dir, "requests.db");
    writeFileSync(path, "not a database\n");
    for (const verb of ["stats", "clear"]) {
      const r = await hone(["cache", verb, "--cache-dir", dir]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`the request cache ${path} is damaged`);
      expect(r.stderr).toContain(`remove it (rm ${path})`);
    }
  });
});
