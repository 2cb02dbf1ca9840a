import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDb } from "../../src/store/db.ts";
import { loadSplit } from "../../src/task/qa/benchmarks.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";

// A test-only benchmark (MATH-500 here) draws train and validation from its test file's search pool. hone train's
// held_out on `test` measured the whole test file, the panel's own questions among them: the held-out result was
// not held out. It is the test file without the pool (`test-heldout`, as hone compare measures).

const data = join(ROOT, "test", "fixtures", "datasets");
const config = (panelSplit: string, extra: string) =>
  `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: math500, split: ${panelSplit}, limit: 3, data_dir: ${data}}\nestimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\n${extra}`;

describe("hone train's held-out split on a test-only benchmark", () => {
  it("measures the test file without the search pool the panel is drawn from", { timeout: 180_000 }, async () => {
    const cwd = tempDir("qa-probe4-held-out-");
    write(join(cwd, "train.yaml"), config("train", "held_out: {split: test, limit: 1000}\nout: run\n"));
    const r = await hone(["train", "--config", "train.yaml", "--epochs", "1", "--json"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const heldout = await loadSplit("math500", "test-heldout", { dir: data });
    const whole = await loadSplit("math500", "test", { dir: data });
    expect(heldout.length).toBeLessThan(whole.length);
    expect(out.held_out).toMatchObject({ split: "test-heldout", tasks: heldout.length });

    const db = openDb(join(cwd, "run", "hone.db"), { readonly: true });
    const rows = db
      .prepare("SELECT m.split, t.task_id FROM task_results t JOIN measurements m ON m.id = t.measurement_id")
      .all() as { split: string; task_id: string }[];
    db.close();
    const panelIds = new Set(rows.filter((x) => x.split === "train").map((x) => x.task_id));
    const heldIds = new Set(rows.filter((x) => x.split === "test-heldout").map((x) => x.task_id));
    expect(panelIds.size).toBe(3);
    expect([...heldIds].sort()).toEqual(heldout.map((t) => t.id).sort());
    expect([...heldIds].filter((id) => panelIds.has(id))).toEqual([]);
    // Not one question of the search pool (where any panel of this benchmark comes from) is in the held-out set.
    const pool = [
      ...(await loadSplit("math500", "train", { dir: data })),
      ...(await loadSplit("math500", "validation", { dir: data })),
    ];
    expect(pool.filter((t) => heldIds.has(t.id))).toEqual([]);
  });

  it("refuses a panel on test with a held-out split drawn from that test file, naming the field", async () => {
    const cwd = tempDir("qa-probe4-held-out-refused-");
    write(join(cwd, "train.yaml"), config("test", "held_out: {split: validation}\nout: run\n"));
    const r = await hone(["train", "--config", "train.yaml", "--epochs", "1"], { cwd });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/held_out\.split.*math500 \(published with a test file only\).*overlaps the panel on test/s);
  });
});
