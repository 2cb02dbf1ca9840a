import { describe, expect, it } from "vitest";
import {
  applySearchReplace,
  assertFrozenUnchanged,
  blockText,
  EditError,
  findRegions,
  replaceBlock,
} from "../../src/task/evolve-block.ts";

const program = [
  "import math",
  "",
  "# EVOLVE-BLOCK-START",
  "def f(x):",
  "    return x * 2.0",
  "# EVOLVE-BLOCK-END",
  "",
  "def run():",
  "    return f(3)",
  "",
].join("\n");
const sr = (search: string, replace: string) => `<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE`;

describe("EVOLVE block regions", () => {
  it("finds the editable lines between the markers", () => {
    const [r] = findRegions(program);
    expect(r?.startLine).toBe(4);
    expect(r?.endLine).toBe(5);
    expect(blockText(program)).toBe("def f(x):\n    return x * 2.0\n");
  });
  it.each([
    ["no markers", "x = 1\n", /no editable region/],
    ["start without end", "# EVOLVE-BLOCK-START\nx = 1\n", /no EVOLVE-BLOCK-END/],
    ["end without start", "x = 1\n# EVOLVE-BLOCK-END\n", /has no EVOLVE-BLOCK-START/],
    ["nested", "# EVOLVE-BLOCK-START\n# EVOLVE-BLOCK-START\n# EVOLVE-BLOCK-END\n# EVOLVE-BLOCK-END\n", /nested/],
  ])("refuses %s", (_name, text, message) => {
    expect(() => findRegions(text)).toThrow(message);
  });
});

describe("SEARCH/REPLACE", () => {
  it("applies a block inside the region", () => {
    const out = applySearchReplace(program, sr("    return x * 2.0", "    return x * 3.0"));
    expect(out).toContain("return x * 3.0");
    expect(out.replace("3.0", "2.0")).toBe(program);
  });
  it("applies several blocks in order, all or nothing", () => {
    const two = `${sr("def f(x):", "def f(x, k=1):")}\n${sr("does not exist", "y")}`;
    expect(() => applySearchReplace(program, two)).toThrow(/SEARCH block 2 does not match/);
  });
  it("refuses a match outside the editable region with its line numbers", () => {
    expect(() => applySearchReplace(program, sr("import math", "import os"))).toThrow(
      /matches lines 1-1, outside the editable region \(lines 4-5\)/,
    );
  });
  it("refuses a match that spans a marker", () => {
    expect(() =>
      applySearchReplace(program, sr("    return x * 2.0\n# EVOLVE-BLOCK-END", "    return 0\n# EVOLVE-BLOCK-END\nimport os")),
    ).toThrow(EditError);
  });
  it("uses an occurrence inside the region when the same text also appears outside", () => {
    const twice = program.replace("def run():", "def run():\n    x = 2.0");
    const out = applySearchReplace(twice, sr("2.0", "5.0"));
    expect(out).toContain("x * 5.0");
    expect(out).toContain("    x = 2.0");
  });
  it("refuses text without any SEARCH block and an empty SEARCH", () => {
    expect(() => applySearchReplace(program, "just replace it")).toThrow(/no SEARCH\/REPLACE block/);
    expect(() => applySearchReplace(program, sr("", "x"))).toThrow(/empty/);
  });
  it("refuses a replacement that smuggles new markers in", () => {
    expect(() =>
      applySearchReplace(program, sr("    return x * 2.0", "    return x\n# EVOLVE-BLOCK-END\nimport os\n# EVOLVE-BLOCK-START")),
    ).toThrow(EditError);
  });
});

describe("whole-block replacement", () => {
  it("replaces the block and keeps everything else", () => {
    const out = replaceBlock(program, "def f(x):\n    return 0");
    expect(blockText(out)).toBe("def f(x):\n    return 0\n");
    expect(out.startsWith("import math\n\n# EVOLVE-BLOCK-START\n")).toBe(true);
    expect(out.endsWith("# EVOLVE-BLOCK-END\n\ndef run():\n    return f(3)\n")).toBe(true);
  });
  it("refuses markers inside the new block and a missing block index", () => {
    expect(() => replaceBlock(program, "x = 1\n# EVOLVE-BLOCK-END\nimport os")).toThrow(/may not contain EVOLVE-BLOCK markers/);
    expect(() => replaceBlock(program, "x", 3)).toThrow(/no EVOLVE block number 3/);
  });
  it("detects any change to frozen code", () => {
    expect(() => assertFrozenUnchanged(program, program.replace("import math", "import os"))).toThrow(/outside the EVOLVE block/);
  });
});
