// hone replay on run folders that are damaged or hostile (a run folder may come from anyone): it refuses, or says
// what differs naming the record, with a documented exit code; it never changes the run it replays, never crashes,
// never runs for ever.
import { appendFileSync, cpSync, readdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const DATA = join(ROOT, "test", "fixtures", "datasets");
const strategy = (to: string, from = "last") =>
  `diff --git a/prompt.md b/prompt.md\n--- a/prompt.md\n+++ b/prompt.md\n@@ -2,3 +2,3 @@\n final_answer exactly once with your answer in the requested format.\n \n-hone-hint: qa_strategy=${from}\n+hone-hint: qa_strategy=${to}\n`;

let base: string;
let evalRun: string;

/** A copy of the eval run, changed by `change` (given its hone.db open for writing). */
function damaged(name: string, change: (db: Database.Database) => void): string {
  const dir = join(base, name);
  cpSync(evalRun, dir, { recursive: true });
  const db = new Database(join(dir, "hone.db"));
  change(db);
  db.close();
  return dir;
}

const count = (dir: string) => {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const n = (db.prepare("SELECT COUNT(*) AS n FROM responses").get() as { n: number }).n;
  db.close();
  return n;
};

describe("hone replay of damaged or hostile run folders", () => {
  beforeAll(async () => {
    base = tempDir();
    evalRun = join(base, "eval");
    const r = await hone([
      ...["eval", "--harness", join(ROOT, "harnesses", "qa"), "--benchmark", "gsm8k", "--split", "test"],
      ...["--limit", "4", "--data-dir", DATA, "--model", "offline", "--out", evalRun],
    ]);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);

  it("reports a damaged model response naming it, and never removes it from the run replayed", {
    timeout: 60_000,
  }, async () => {
    for (const [name, change] of [
      ["not-json", "'{not json'"],
      ["usage-text", "json_set(response, '$.usage', 'lots')"],
    ] as const) {
      const dir = damaged(name, (db) =>
        db.exec(`UPDATE responses SET response = ${change} WHERE key = (SELECT key FROM responses ORDER BY key LIMIT 1)`),
      );
      const before = count(dir);
      for (const f of ["hone.db-wal", "hone.db-shm"]) rmSync(join(dir, f), { force: true }); // what count's reader left
      const r = await hone(["replay", dir, "--out", join(base, `${name}-replay`), "--json"]);
      // Before, a record that was not JSON was deleted from the run replayed (a "miss"), and usage as text crashed
      // the replay (exit 1, SQLite's NOT NULL constraint).
      expect(r.code, r.stderr).toBe(7);
      const out = JSON.parse(r.stdout);
      expect(out.matches).toBe(false);
      expect(out.differences.join("\n")).toMatch(
        /task_results\[\d\]\.error: null ≠ "replay: the recorded response [0-9a-f]{16}…/,
      );
      const replayed = new Database(join(base, `${name}-replay`, "hone.db"), { readonly: true });
      const errors = replayed.prepare("SELECT error FROM task_results WHERE error IS NOT NULL").all() as { error: string }[];
      replayed.close();
      expect(errors.map((e) => e.error)).toEqual([
        expect.stringMatching(new RegExp(`the recorded response [0-9a-f]{16}… in ${dir}/hone\\.db is damaged: `)),
      ]);
      // Nothing was written beside the run's hone.db either (a -wal from a write, a table added).
      expect(readdirSync(dir).filter((f) => f.startsWith("hone.db"))).toEqual(["hone.db"]);
      expect(count(dir)).toBe(before);
    }
  });

  it("refuses stored settings it cannot replay (not JSON, 10⁹ samples a task) with exit 2, before running", {
    timeout: 60_000,
  }, async () => {
    const notJson = damaged("config-not-json", (db) => db.exec("UPDATE runs SET config = '{not json'"));
    const r = await hone(["replay", notJson, "--out", join(base, "cnj-replay")]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/hone\.db: the run's settings \(runs\.config\) are not readable JSON/);
    expect(r.stderr).not.toMatch(/ at /);
    // Before, the replay built a panel of 4·10⁹ rows and ran out of memory after minutes.
    const many = damaged("config-samples", (db) => db.exec("UPDATE runs SET config = json_set(config, '$.samples', 1e9)"));
    const s = await hone(["replay", many, "--out", join(base, "cs-replay")], { timeoutMs: 30_000 });
    expect(s.code, s.stderr).toBe(2);
    expect(s.stderr).toMatch(/samples 1000000000, not a whole number from 1 to 4/);
    // A run whose kind was changed to train has no train settings: refused, not a TypeError.
    const kind = damaged("kind", (db) => db.exec("UPDATE runs SET kind = 'train'"));
    const k = await hone(["replay", kind, "--out", join(base, "k-replay")]);
    expect(k.code, k.stderr).toBe(2);
    expect(k.stderr).toMatch(/are not a train run's/);
  });

  it("refuses a hone.db that is truncated, not a database, or not a file, with exit 2", { timeout: 60_000 }, async () => {
    const cases: [string, (dir: string) => void][] = [
      ["truncated", (dir) => truncateSync(join(dir, "hone.db"), 8192)],
      ["garbage", (dir) => writeFileSync(join(dir, "hone.db"), Buffer.alloc(100_000, 7))],
    ];
    for (const [name, change] of cases) {
      const dir = join(base, name);
      cpSync(evalRun, dir, { recursive: true });
      change(dir);
      const r = await hone(["replay", dir, "--out", join(base, `${name}-replay`)]);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/hone\.db: is not a readable hone run database .*the recording is damaged/);
      expect(r.stderr).not.toMatch(/internal error| at /);
    }
  });
});

describe("hone train: the seed harness and the files train.yaml names", () => {
  it("replays from the seed harness the run kept, whatever became of the folder it was started from", {
    timeout: 90_000,
  }, async () => {
    const dir = tempDir();
    const seed = join(dir, "seed");
    cpSync(join(ROOT, "harnesses", "qa"), seed, { recursive: true });
    writeFileSync(join(dir, "p1.diff"), strategy("sum"));
    writeFileSync(
      join(dir, "train.yaml"),
      `harness: seed\npanel: { benchmark: gsm8k, split: test, limit: 6, data_dir: ${DATA} }\nestimator: { kind: patch_queue, patches: [p1.diff] }\nconcurrency: 2\n`,
    );
    const run = join(dir, "run");
    const t = await hone(["train", "--config", join(dir, "train.yaml"), "--epochs", "1", "--out", run]);
    expect(t.code, t.stderr).toBe(0);
    // Before, the replay copied the folder train.yaml named: changed, every model call was unrecorded (exit 7); gone,
    // an ENOENT with its stack (exit 1).
    appendFileSync(join(seed, "prompt.md"), "\nBe brief.\n");
    const changed = await hone(["replay", run, "--out", join(dir, "r1"), "--json"]);
    expect(changed.code, changed.stderr).toBe(0);
    expect(JSON.parse(changed.stdout).matches).toBe(true);
    rmSync(seed, { recursive: true });
    const gone = await hone(["replay", run, "--out", join(dir, "r2"), "--json"]);
    expect(gone.code, gone.stderr).toBe(0);
    expect(JSON.parse(gone.stdout).matches).toBe(true);
  });

  it("refuses a missing harness (exit 3) and a patch file that is missing or not a file (exit 5), naming it", {
    timeout: 60_000,
  }, async () => {
    const dir = tempDir();
    const panel = `panel: { benchmark: gsm8k, split: test, limit: 2, data_dir: ${DATA} }\n`;
    writeFileSync(join(dir, "p1.diff"), strategy("sum"));
    writeFileSync(join(dir, "missing.yaml"), `harness: nowhere\n${panel}estimator: { kind: patch_queue, patches: [p1.diff] }\n`);
    const h = await hone(["train", "--config", join(dir, "missing.yaml"), "--epochs", "1", "--out", join(dir, "a")]);
    expect(h.code, h.stderr).toBe(3);
    expect(h.stderr).toMatch(/nowhere: is not a harness package \(no such directory\)/);
    const harness = `harness: ${join(ROOT, "harnesses", "qa")}\n${panel}`;
    for (const [name, patch, why] of [
      ["gone", "gone.diff", /gone\.diff cannot be read \(ENOENT\)/],
      ["zero", "/dev/zero", /\/dev\/zero is not a regular file/],
    ] as const) {
      writeFileSync(join(dir, `${name}.yaml`), `${harness}estimator: { kind: patch_queue, patches: [${patch}] }\n`);
      const r = await hone(["train", "--config", join(dir, `${name}.yaml`), "--epochs", "1", "--out", join(dir, name)], {
        timeoutMs: 30_000,
      });
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).toMatch(/\.yaml \(estimator\.patches\.0\): /);
      expect(r.stderr).toMatch(why);
    }
    expect(readdirSync(dir).sort()).toEqual(["gone.yaml", "missing.yaml", "p1.diff", "zero.yaml"]);
  });
});
