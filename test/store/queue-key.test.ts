import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRunDb, openDb, runQueueKey } from "../../src/store/db.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A run's jobs are named in a queue by runQueueKey: the same for the run whenever it is resumed, and different for two
// runs created in the same millisecond (a grid's cells started together), whose first jobs are otherwise the same.
describe("runQueueKey", () => {
  const run = (config: unknown, createdAt: string) => {
    const path = join(tempDir(), "hone.db");
    createRunDb(path, "optimize", config);
    const db = openDb(path);
    db.prepare("UPDATE runs SET created_at = ? WHERE id = 'run'").run(createdAt);
    return { db, path };
  };

  it("tells apart two runs created in the same millisecond", () => {
    const at = "2026-12-07T10:00:00.123Z";
    const a = run({ out: "/runs/grid/gepa-s0", method: "gepa" }, at);
    const b = run({ out: "/runs/grid/dgm-s0", method: "dgm" }, at);
    expect(runQueueKey(a.db, "opt")).toMatch(/^opt-20261207100000123-[0-9a-f]{12}$/);
    expect(runQueueKey(a.db, "opt")).not.toBe(runQueueKey(b.db, "opt"));
  });

  it("is the same each time the run is opened (a resumed coordinator finds its jobs)", () => {
    const a = run({ out: "/runs/x" }, "2026-12-07T10:00:00.123Z");
    const key = runQueueKey(a.db, "train");
    a.db.close();
    expect(runQueueKey(openDb(a.path), "train")).toBe(key);
  });
});
