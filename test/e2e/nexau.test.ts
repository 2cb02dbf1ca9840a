import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { listFiles } from "../../src/harness/files.ts";
import { hone } from "../helpers/cli.ts";
import { copyOf, edit, ROOT, tempDir } from "../helpers/fixtures.ts";

// HarnessTTT's initial harness in NexAU's layout, as a user meets it: checked, run, imported and exported with the
// hone CLI, unmodified.

const FIXTURE = join(ROOT, "test", "fixtures", "nexau", "harnessttt-initial");
const long = { timeout: 240_000 };
const events = (dir: string) =>
  readFileSync(join(dir, "trajectory.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("a HarnessTTT package under the hone CLI", () => {
  it("passes hone harness check, saying what it reads but does not apply", long, async () => {
    const r = await hone(["harness", "check", FIXTURE, "--task", "circle-packing"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^inner_h2_discovery: 7 tools, 1 skills, 3 middlewares \(2 generated\)/);
    expect(r.stdout).toMatch(/read as a NexAU package:[\s\S]*RoundAndTokenReminderMiddleware[\s\S]*accepted\n$/);
  });

  it("is refused with every problem, file and field when it cannot run (exit 3)", long, async () => {
    const bad = copyOf(FIXTURE);
    edit(join(bad, "agent.yaml"), (t) =>
      t
        .replace("binding: inner.harness.tools.discovery:finish", "binding: mypkg.tools:finish_now")
        .replace("tracers:", "  - import: mypkg.middleware:Auditor\nplugins:\n  - use: telemetry\ntracers:")
        .replace("remind_from_left: 3", "remind_from_left: -1"),
    );
    const r = await hone(["harness", "check", bad, "--json"]);
    expect(r.code).toBe(3);
    const report = JSON.parse(r.stdout);
    const said = (p: { file: string; field?: string; message: string }) =>
      `${relative(bad, p.file)}${p.field ? ` (${p.field})` : ""}: ${p.message}`;
    expect(report.problems.map(said)).toEqual([
      expect.stringMatching(/^agent.yaml \(plugins\): NexAU plugins cannot run in hone/),
      expect.stringMatching(/^agent.yaml \(tools.3.binding\): "mypkg.tools:finish_now" is a Python function/),
      expect.stringMatching(/^agent.yaml \(middlewares.0.params.remind_from_left\)/),
      expect.stringMatching(/^agent.yaml \(middlewares.4.import\): "mypkg.middleware:Auditor" is a Python middleware class/),
    ]);
    const run = await hone([
      "run",
      "--harness",
      bad,
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--out",
      join(tempDir(), "x"),
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr.match(/agent.yaml \(/g)).toHaveLength(4);
  });

  it("runs unmodified under hone run with the offline model", long, async () => {
    const out = join(tempDir(), "run");
    const r = await hone([
      "run",
      "--harness",
      FIXTURE,
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--max-evals",
      "4",
      "--out",
      out,
    ]);
    expect(r.code).toBe(0);
    const result = JSON.parse(readFileSync(join(out, "result.json"), "utf8"));
    expect(result).toMatchObject({ status: "completed", harness: { name: "inner_h2_discovery", dir: FIXTURE } });
    expect(result.evaluations.used).toBe(4);
    const tools = new Set(
      events(out)
        .filter((e) => e.type === "tool_result")
        .map((e) => e.name),
    );
    expect([...tools].sort()).toEqual(expect.arrayContaining(["edit_program", "evaluate_program", "view_program"]));
  });

  it("runs its Python tool when the executor calls it (the offline model does, given a hint)", long, async () => {
    const dir = copyOf(FIXTURE);
    edit(join(dir, "system.md"), (t) => `${t}\nhone-hint: combined_tool=evaluate_block\n`);
    const out = join(tempDir(), "run");
    const r = await hone([
      "run",
      "--harness",
      dir,
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--max-evals",
      "4",
      "--out",
      out,
    ]);
    expect(r.code).toBe(0);
    const all = events(out);
    const calls = all.filter((e) => e.type === "tool_result" && e.name === "evaluate_block");
    expect(calls.length).toBeGreaterThanOrEqual(4);
    expect(JSON.parse(calls[0].output)).toMatchObject({ validity: 1, error: null, valid: true, evaluations_left: 3 });
    expect(all.filter((e) => e.type === "evaluation")).toHaveLength(4);
    expect(all.some((e) => e.type === "tool_log" && e.tool === "evaluate_block")).toBe(true);
  });

  it("imports to a hone package and exports back to the same files", long, async () => {
    const root = tempDir();
    const a = join(root, "a");
    const b = join(root, "b");
    const imported = await hone(["harness", "import", FIXTURE, "--out", a]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/imported .* into .*\/a\n/);
    expect(existsSync(join(a, "custom_tools", "evaluate_block.py"))).toBe(true);
    expect((await hone(["harness", "check", a])).code).toBe(0);
    const exported = await hone(["harness", "export", a, "--format", "nexau", "--out", b]);
    expect(exported.code).toBe(0);
    const same = (d: string) => Object.fromEntries(listFiles(d).map((f) => [f, readFileSync(join(d, f), "utf8")]));
    expect(same(b)).toEqual(same(FIXTURE));
    const again = await hone(["harness", "export", a, "--format", "cordis", "--out", join(root, "c")]);
    expect([again.code, again.stderr]).toEqual([
      2,
      expect.stringMatching(/--format cordis is not known; the formats are: nexau/),
    ]);
  });
});
