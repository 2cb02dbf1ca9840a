import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash, listFiles } from "../../src/harness/files.ts";
import { loadHarness } from "../../src/harness/package.ts";
import { openDb } from "../../src/store/db.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";

// Issue 7: "Splits are fixed by seed; the test split is reported once, at the end." harness-training's quickstart
// (examples/quickstart.py) is held-out eval → epochs → eval, with a before/after report. `hone train` measured only
// its panel and ended at worktrees/<sha>: no held-out result, and no best/ package as `hone optimize` writes.

const data = join(ROOT, "test", "fixtures", "datasets");
const config = (extra: string) =>
  `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 3, data_dir: ${data}}\nestimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\n${extra}`;

describe("hone train's held-out evaluation and best/", () => {
  it("measures the seed and HEAD once on the held-out split and writes best/ with meta.json", { timeout: 120_000 }, async () => {
    const cwd = tempDir("train-held-out-");
    write(join(cwd, "train.yaml"), config("held_out: {split: test, limit: 4}\nout: run\n"));
    const r = await hone(["train", "--config", "train.yaml", "--epochs", "2", "--json"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.best).toBe(join(cwd, "run", "best"));
    expect(out.held_out).toMatchObject({ split: "test", tasks: 4, seed: { finished: true }, head: { finished: true } });
    expect(out.held_out.head.commit).toBe(out.head);

    // best/ is HEAD's package, loadable as it is, with what it was measured at.
    const best = join(cwd, "run", "best");
    loadHarness(best);
    const files = listFiles(out.head_dir);
    expect(listFiles(best).sort()).toEqual([...files, "meta.json"].sort());
    expect(contentHash(best, files)).toBe(contentHash(out.head_dir, files));
    const meta = JSON.parse(readFileSync(join(best, "meta.json"), "utf8"));
    expect(meta).toMatchObject({ commit: out.head, benchmark: "gsm8k", panel: { split: "validation", tasks: 3 } });
    expect(meta.held_out).toEqual(out.held_out);

    // The held-out measurements are on the test split's questions, none of which is in the panel.
    const db = openDb(join(cwd, "run", "hone.db"), { readonly: true });
    const rows = db
      .prepare("SELECT m.split, t.task_id FROM task_results t JOIN measurements m ON m.id = t.measurement_id")
      .all() as {
      split: string;
      task_id: string;
    }[];
    db.close();
    const panelIds = new Set(rows.filter((x) => x.split === "validation").map((x) => x.task_id));
    const heldIds = new Set(rows.filter((x) => x.split === "test").map((x) => x.task_id));
    expect(heldIds.size).toBe(4);
    expect([...heldIds].filter((id) => panelIds.has(id))).toEqual([]);

    // The epochs' summary still pairs each candidate with its panel measurement, not its held-out one.
    for (const e of out.epochs as { baseline_solved: number | null; candidate_solved: number | null }[]) {
      expect(e.baseline_solved).not.toBeNull();
      expect(e.candidate_solved).toBeLessThanOrEqual(3);
    }

    const text = await hone(["train", "--resume", join(cwd, "run"), "--epochs", "2"], { cwd });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^held-out test: seed \d of 4 solved \(mean [\d.]+\), HEAD \d of 4 solved/m);
  });

  it("refuses a held-out split that is the panel's own, naming the field", async () => {
    const cwd = tempDir("train-held-out-");
    write(join(cwd, "train.yaml"), config("held_out: {split: validation}\n"));
    const r = await hone(["train", "--config", "train.yaml", "--epochs", "1"], { cwd });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/held_out\.split/);
    expect(r.stderr).toMatch(/is the panel's split \(validation\)/);
  });
});
