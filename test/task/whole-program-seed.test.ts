import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { taskMessage } from "../../src/runtime/rollout.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { applySearchReplace, assertFrozenUnchanged, editableRegions, replaceBlock } from "../../src/task/evolve-block.ts";
import { ROOT } from "../helpers/fixtures.ts";

// OpenEvolve never requires EVOLVE-BLOCK markers: a seed without any is editable whole. hone accepts one in the
// OpenEvolve layout, tells the executor so, and keeps such a program without markers through every edit.

const SHAPES = join(ROOT, "test", "fixtures", "task-shapes");
const SEED = readFileSync(join(SHAPES, "no-markers", "initial_program.py"), "utf8");
const MARKED = "import math\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n";
const sr = (search: string, replace: string) => `<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE`;

describe("a seed without EVOLVE-BLOCK markers", () => {
  it("loads in the OpenEvolve layout", () => {
    const task = loadTaskFolder(join(SHAPES, "no-markers"));
    expect(task.layout).toBe("openevolve");
    expect(task.seedProgram).toBe(SEED);
  });

  it("is refused in the SimpleTES layout, saying where it would be accepted", () => {
    expect(() => loadTaskFolder(join(SHAPES, "no-markers-simpletes"))).toThrow(
      /init_program.py \(EVOLVE-BLOCK\): the program has no editable region .*only an OpenEvolve-layout folder's seed/,
    );
  });

  it("still has its markers checked when it has any", () => {
    expect(() => editableRegions("# EVOLVE-BLOCK-START\nX = 1\n")).toThrow(/no EVOLVE-BLOCK-END/);
  });
});

describe("editing a program without markers", () => {
  it("makes the whole program the editable region", () => {
    expect(editableRegions(SEED)).toEqual([{ start: 0, end: SEED.length, startLine: 1, endLine: 6 }]);
  });

  it("lets a SEARCH/REPLACE change any line, and a block replace all of it", () => {
    expect(applySearchReplace(SEED, sr("SCALE = 1.0", "SCALE = 2.0"))).toBe(SEED.replace("1.0", "2.0"));
    expect(replaceBlock(SEED, "def run():\n    return 3.0\n")).toBe("def run():\n    return 3.0\n");
  });

  it("refuses an edit that adds markers, and one that removes every marker of a marked program", () => {
    expect(() => applySearchReplace(SEED, sr("SCALE = 1.0", "# EVOLVE-BLOCK-START\nSCALE = 1.0\n# EVOLVE-BLOCK-END"))).toThrow(
      /would add EVOLVE-BLOCK markers to a program that has none/,
    );
    expect(() => assertFrozenUnchanged(MARKED, "import math\nX = 1.0\n")).toThrow(/would remove every EVOLVE-BLOCK marker/);
  });
});

describe("what the executor is told", () => {
  it("view_program and the task message say the whole program is editable", () => {
    const task = loadTaskFolder(join(SHAPES, "no-markers"));
    const env = new DiscoveryEnvironment({
      task,
      startProgram: SEED,
      maxEvals: 1,
      evaluate: async () => ({ valid: false, metrics: {}, artifacts: {}, seconds: 0 }),
    });
    expect(env.view()).toMatch(/^Current program \(7 lines; it has no EVOLVE-BLOCK markers, so the whole program is editable/);
    expect(taskMessage(task, undefined, 5)).toMatch(/the whole program is editable/);
  });
});
