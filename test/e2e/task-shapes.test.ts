import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// What `hone evaluate`, `hone tasks show` and `hone harness check` say about folders in the field's shapes: never a
// file that does not exist, never "the program was evaluated" when it was not, what a folder needs said first.

const SHAPES = join(ROOT, "test", "fixtures", "task-shapes");
const at = (name: string) => join(SHAPES, name);

describe("hone evaluate", () => {
  it("says the evaluator failed to load (exit 8), not that the program was evaluated", async () => {
    const r = await hone([
      "evaluate",
      "--task",
      at("evaluator-fails-to-load"),
      join(at("evaluator-fails-to-load"), "initial_program.py"),
    ]);
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(
      /the evaluator failed to load: RuntimeError: the evaluator's own setup failed .*so the program was not evaluated/,
    );
    expect(r.stdout + r.stderr).not.toMatch(/the program was evaluated/);
  });

  it("scores a program whose @dataclass needs its module registered", async () => {
    const r = await hone([
      "evaluate",
      "--task",
      at("dataclass-evaluator"),
      join(at("dataclass-evaluator"), "initial_program.py"),
    ]);
    expect(r.stdout).toMatch(/^valid: combined_score = 2\.5/);
  });
});

describe("hone tasks show", () => {
  it("shows an evaluator that imports its evaluate()", async () => {
    const r = await hone(["tasks", "show", at("evaluate-imported")]);
    expect(r.code).toBe(0);
  });

  it("says a seed without EVOLVE-BLOCK markers is editable whole", async () => {
    const r = await hone(["tasks", "show", at("no-markers")]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^editable: the whole program: its seed has no EVOLVE-BLOCK markers/m);
    const json = await hone(["tasks", "show", at("no-markers"), "--json"]);
    expect(JSON.parse(json.stdout).editable).toBe("whole program");
  });

  it("names what is missing when there is no description, and the configs that have one", async () => {
    const r = await hone(["tasks", "show", at("configs-subfolder")]);
    expect(r.code).toBe(4);
    expect(r.stderr).not.toContain(join(at("configs-subfolder"), "hone.yaml"));
    expect(r.stderr).toMatch(/configs-subfolder: has no description: no config.yaml/);
    expect(r.stderr).toContain(`give one as the task, e.g. --task ${join(at("configs-subfolder"), "configs", "bigger.yaml")}`);
    const named = await hone(["tasks", "show", join(at("configs-subfolder"), "configs", "bigger.yaml")]);
    expect(named.code).toBe(0);
    expect(named.stdout).toMatch(/^configs-subfolder-bigger /);
    expect(named.stdout).toMatch(/layout: OpenEvolve: init_program.py, evaluator.py, configs\/bigger.yaml/);
  });

  it("points a SimpleTES folder at its instruction file of another extension", async () => {
    const r = await hone(["tasks", "show", at("instruction-elsewhere")]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/instruction-elsewhere.triton looks like the instruction SimpleTES is given with --instruction/);
  });

  it("says what a folder needs before what else is wrong with it", async () => {
    const r = await hone(["tasks", "show", at("needs-and-no-description")]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /^hone: .*evaluator.py: task needs-and-no-description needs Python modules .*hone_fixture_module_that_is_not_installed/,
    );
    expect(r.stderr).toMatch(/\nThen, too: .*needs-and-no-description: has no description/);
  });
});

describe("hone harness check", () => {
  it("says a Cordis package is not read, and which HarnessTTT commit has the NexAU layout", async () => {
    const r = await hone(["harness", "check", at("cordis-harness")]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/is a Cordis package \(cordis.yml with plugins\/discovery-optimization.mjs\).*hone does not read/);
    expect(r.stdout).toMatch(/NexAU layout .*gray311\/Self_Adapt_Harness commit bebde8e/);
    expect(r.stdout).not.toMatch(/has no agent.yaml/);
  });

  it.each([
    ["run", ["run", "--harness", "HARNESS", "--task", "circle-packing", "--model", "offline", "--max-evals", "1"]],
    ["harness import", ["harness", "import", "HARNESS", "--out", "OUT"]],
  ])("says so too when hone %s is given one", async (_verb, args) => {
    const out = join(tempDir(), "imported");
    const r = await hone(args.map((a) => (a === "HARNESS" ? at("cordis-harness") : a === "OUT" ? out : a)));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/is a Cordis package .*commit bebde8e/);
    expect(r.stderr).not.toMatch(/has no agent.yaml/);
    expect(existsSync(out)).toBe(false);
  });
});
