import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A method given as a program that does not keep its contract: it writes more folders than the `proposals` it was
// asked for, or only folders hone refuses. The loop takes at most K, and a refused output leaves its reasons in
// hone.db as an invalid proposal (it used to be dropped without a word: a round of "0 valid, 0 invalid").
const OFFLINE = ["--executor", "offline", "--proposer", "offline"];

function methodDir(name: string, body: string[]): string {
  const dir = tempDir();
  writeFileSync(join(dir, "method.json"), JSON.stringify({ name, entrypoint: "python3 m.py", timeout: 60 }));
  const head = ["import json, os, shutil, sys", "req = json.load(sys.stdin); out = req['output_dir']"];
  writeFileSync(join(dir, "m.py"), [...head, ...body].join("\n"));
  return dir;
}

function candidates(run: string) {
  const db = new Database(join(run, "hone.db"), { readonly: true });
  const rows = db.prepare("SELECT id, status, gate_error FROM candidates WHERE round = 1 ORDER BY id").all();
  db.close();
  return rows as { id: string; status: string; gate_error: string | null }[];
}

const optimize = (method: string, out: string) =>
  hone(optimizeArgs({ rounds: 1, proposals: 2, maxEvals: 2, seed: 1, out, extra: [...OFFLINE, "--method", method] }));

describe("a method program that breaks its contract", () => {
  it("writes four times the proposals asked for: only K are measured", async () => {
    const method = methodDir("flood", [
      "src = os.path.join(req['archive_dir'], 'candidates', 'r00-seed')",
      "for k in range(req['proposals'] * 4):",
      "    d = os.path.join(out, 'p-%02d' % k); shutil.copytree(src, d)",
      "    open(os.path.join(d, 'prompt.md'), 'a').write('variant %d' % k)",
      "    json.dump({'parent': 'r00-seed'}, open(os.path.join(d, 'proposal.json'), 'w'))",
    ]);
    const out = join(tempDir(), "run");
    const r = await optimize(method, out);
    expect(r.code, r.stderr).toBe(0);
    expect(candidates(out).map((c) => [c.id, c.status])).toEqual([
      ["r01-k0", "valid"],
      ["r01-k1", "valid"],
    ]);
  }, 120_000);

  it("writes only folders hone refuses: the round records why", async () => {
    const method = methodDir("junk", [
      "os.makedirs(os.path.join(out, 'a')); open(os.path.join(out, 'a', 'proposal.json'), 'w').write('{not json')",
      "os.makedirs(os.path.join(out, 'b')); json.dump({'parent': 'r77-k9'}, open(os.path.join(out, 'b', 'proposal.json'), 'w'))",
    ]);
    const out = join(tempDir(), "run");
    const r = await optimize(method, out);
    expect(r.code, r.stderr).toBe(0);
    const rows = candidates(out);
    expect(rows.map((c) => [c.id, c.status])).toEqual([["r01-k0", "invalid"]]);
    expect(rows[0]?.gate_error).toMatch(/a\/proposal\.json: missing, not a regular file, or not JSON/);
    expect(rows[0]?.gate_error).toMatch(/b\/proposal\.json: parent r77-k9 is not a candidate/);
  }, 120_000);
});
