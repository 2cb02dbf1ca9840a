import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { applySearchReplace, EditError, editableRegions, hasEvolveMarkers, replaceBlock } from "../../src/task/evolve-block.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

// A seed saved by an editor that writes a byte-order mark, with its first line the start marker: Python runs it and
// OpenEvolve finds the marker (a substring of the line), but hone refused the folder: "EVOLVE-BLOCK-END at line 4 has
// no EVOLVE-BLOCK-START before it".

const BOM = "\uFEFF";
const SEED = `${BOM}# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\n\ndef run():\n    return X\n`;

describe("a seed that opens with a byte-order mark", () => {
  it("has its marker on the first line found, and the mark kept outside the block", () => {
    expect(hasEvolveMarkers(SEED)).toBe(true);
    const [r] = editableRegions(SEED);
    expect(SEED.slice(r?.start, r?.end)).toBe("X = 1\n");
    expect(replaceBlock(SEED, "X = 2\n")).toBe(SEED.replace("X = 1", "X = 2"));
  });

  it("loads as a task folder (CRLF line ends too)", () => {
    for (const seed of [SEED, SEED.replace(/\n/g, "\r\n")]) {
      const dir = join(tempDir("hone-bom-"), "task");
      write(join(dir, "initial_program.py"), seed);
      write(join(dir, "evaluator.py"), "def evaluate(program_path):\n    return {'combined_score': 1.0}\n");
      write(join(dir, "config.yaml"), "prompt:\n  system_message: a task\n");
      expect(loadTaskFolder(dir).seedProgram).toBe(seed);
    }
  });

  it("a new block may not smuggle in a marker behind a byte-order mark", () => {
    expect(() => replaceBlock(SEED, `X = 2\n${BOM}# EVOLVE-BLOCK-END\nY = 3\n`)).toThrow(EditError);
  });

  // OpenEvolve and hone_kept.py find a marker as a substring of a line: these would be read as markers there.
  it.each([
    ["a suffix after END", "X = 2\n# EVOLVE-BLOCK-END_2\nY = 3\n"],
    ["a suffix after START", "X = 2\n# EVOLVE-BLOCK-START2\nY = 3\n"],
    ["a marker after code on its line", "X = 2  # EVOLVE-BLOCK-END\nY = 3\n"],
  ])("a new block may not hold a marker upstream finds as a substring (%s)", (_what, block) => {
    expect(() => replaceBlock(SEED, block)).toThrow(/the new block may not contain EVOLVE-BLOCK markers/);
  });

  it.each([
    ["a suffix after END", "# EVOLVE-BLOCK-END_2"],
    ["a marker after code on its line", "X = 1  # EVOLVE-BLOCK-START"],
  ])("a SEARCH/REPLACE edit may not add a marker upstream finds as a substring (%s)", (_what, line) => {
    const edit = `<<<<<<< SEARCH\nX = 1\n=======\nX = 2\n${line}\n>>>>>>> REPLACE\n`;
    expect(() => applySearchReplace(SEED, edit)).toThrow(/would put an EVOLVE-BLOCK marker inside the block/);
  });

  it("a block that already named a marker in a string may be rewritten keeping it", () => {
    const seed = '# EVOLVE-BLOCK-START\nEND = "# EVOLVE-BLOCK-END"\nX = 1\n# EVOLVE-BLOCK-END\n';
    expect(replaceBlock(seed, 'END = "# EVOLVE-BLOCK-END"\nX = 2\n')).toContain("X = 2");
  });

  it("a new block may still name the markers in plain text", () => {
    expect(replaceBlock(SEED, "X = 2  # keeps between the EVOLVE-BLOCK-START and END lines\n")).toContain("X = 2");
  });
});
