import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { HONE_VERSION, type IdentityParts, identityDigest } from "../../src/measure/identity.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const TASK = join(ROOT, "test", "fixtures", "noisy-minimization");

describe("a replay under another hone version than the one that recorded the run", () => {
  // Before: the replay listed only "rollouts[i].identity_digest: "…" ≠ "…"", one opaque line per rollout, and never
  // said that the version (or anything else in the identity) was what differed.
  it("names the component of the measurement identity that differs, once, with the rollouts it concerns", {
    timeout: 180_000,
  }, async () => {
    const out = join(tempDir(), "run");
    const made = await hone(["run", "--task", TASK, "--model", "offline", "--max-evals", "3", "--out", out, "--json"], {
      timeoutMs: 120_000,
    });
    expect(made.code, made.stderr).toBe(0);
    // The run as an older hone would have recorded it: its identities name that version (and their digests follow).
    const db = new Database(join(out, "hone.db"));
    const rows = db.prepare("SELECT id, identity FROM rollouts").all() as { id: string; identity: string }[];
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const older: IdentityParts = { ...(JSON.parse(r.identity) as IdentityParts), hone: "0.0.9" };
      db.prepare("UPDATE rollouts SET identity = ?, identity_digest = ? WHERE id = ?").run(
        JSON.stringify(older),
        identityDigest(older),
        r.id,
      );
    }
    db.close();

    const replay = await hone(["replay", out, "--json"], { timeoutMs: 120_000 });
    expect(replay.code).toBe(7);
    const { differences } = JSON.parse(replay.stdout) as { differences: string[] };
    expect(differences[0]).toBe(
      `identity: hone: "0.0.9" ≠ ${JSON.stringify(HONE_VERSION)} (recorded ≠ replayed; rollout ${rows[0]?.id})`,
    );
    expect(differences.filter((d) => d.startsWith("identity:"))).toHaveLength(1);
  });
});
