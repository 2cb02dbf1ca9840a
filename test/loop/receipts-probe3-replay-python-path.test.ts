import { execFileSync } from "node:child_process";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { makeTask, tempDir, write } from "../helpers/fixtures.ts";

// The evaluator imports its scale from a module on the task's python_path, outside the task folder. Before: editing
// that module changed every score while the run's measurement identity (task content) stayed the same, and
// `hone replay` reproduced the old scores without a word.
const EVALUATOR = "from helper import SCALE\n\ndef evaluate(program_path):\n    return {'combined_score': SCALE}\n";

function taskWithLib(): { dir: string; helper: string } {
  const root = tempDir();
  write(join(root, "lib", "helper.py"), "SCALE = 1.0\n");
  const dir = join(root, "task");
  cpSync(makeTask(EVALUATOR, { honeYaml: "python_path: [../lib]\n" }), dir, { recursive: true });
  return { dir, helper: join(root, "lib", "helper.py") };
}

const identities = (out: string) => {
  const db = new Database(join(out, "hone.db"), { readonly: true });
  const rows = db.prepare("SELECT identity FROM rollouts").all() as { identity: string }[];
  db.close();
  return rows.map((r) => JSON.parse(r.identity).task as { content: string; evaluator?: { python: string; sandbox?: string } });
};

describe("a task whose evaluator imports a module from its python_path", () => {
  it("names the module's content in the identity, and a replay after it changed is refused", { timeout: 240_000 }, async () => {
    const { dir, helper } = taskWithLib();
    const run = (out: string, env?: NodeJS.ProcessEnv) =>
      hone(["run", "--task", dir, "--model", "offline", "--max-evals", "2", "--out", out], {
        timeoutMs: 120_000,
        env,
      });
    const first = join(tempDir(), "a");
    const made = await run(first);
    expect(made.code, made.stderr).toBe(0);

    writeFileSync(helper, "SCALE = 2.0\n");
    const refused = await hone(["replay", first], { timeoutMs: 120_000 });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/replay: the task has changed since .* was recorded/);

    const second = join(tempDir(), "b");
    // Without bubblewrap (a program could read the task folder), which the identity names too.
    const again = await run(second, { HONE_NO_BWRAP: "1" });
    expect(again.code, again.stderr).toBe(0);
    expect(identities(second)[0]?.content).not.toBe(identities(first)[0]?.content);
    // The evaluator's Python is named too (a numpy or Python upgrade can change scores as well).
    const version = execFileSync("python3", ["-c", "import sys; print(sys.version.split()[0])"], { encoding: "utf8" }).trim();
    expect(identities(first)[0]?.evaluator?.python).toBe(version);
    expect(["bubblewrap", "none"]).toContain(identities(first)[0]?.evaluator?.sandbox);
    expect(identities(second)[0]?.evaluator?.sandbox).toBe("none");
    const receipt = await hone(["receipt", second]);
    expect(receipt.stdout).toContain(`evaluated under Python ${version}`);
    expect(receipt.stdout).toContain("without bubblewrap");

    writeFileSync(helper, "SCALE = 1.0\n");
    const replayed = await hone(["replay", first, "--json"], { timeoutMs: 120_000 });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout).differences).toEqual([]);
  });
});
