import { describe, expect, it } from "vitest";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import {
  applySearchReplace,
  assertFrozenUnchanged,
  blockText,
  EditError,
  findRegions,
  MAX_EDIT_BLOCKS,
  MAX_EDIT_CHARS,
  MAX_EDIT_WORK,
  MAX_PROGRAM_CHARS,
  type ParseStats,
  parseSearchReplace,
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

describe("SEARCH/REPLACE parsing, line by line", () => {
  it("reads markers on their own lines, with surrounding spaces, CRLF line ends and text around the blocks", () => {
    const text = "Here is my edit:\r\n  <<<<<<< SEARCH  \r\na\r\nb\r\n=======\r\nc\r\n>>>>>>> REPLACE\r\nthanks";
    expect(parseSearchReplace(text)).toEqual([{ search: "a\r\nb", replace: "c" }]);
  });
  it("keeps a ======= line inside the REPLACE part as content and allows empty parts", () => {
    expect(parseSearchReplace(`${sr("x", "y\n=======\nz")}\n${sr("", "")}`)).toEqual([
      { search: "x", replace: "y\n=======\nz" },
      { search: "", replace: "" },
    ]);
  });
  it.each([
    [
      "a SEARCH opened inside a SEARCH",
      "<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n",
      /SEARCH block 1 \(line 1\) has no ======= line before the next <<<<<<< SEARCH \(line 3\)/,
    ],
    [
      "REPLACE before the divider",
      "<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n",
      /has no ======= line before >>>>>>> REPLACE \(line 3\)/,
    ],
    [
      "a SEARCH opened inside a REPLACE",
      "<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\n",
      /has no >>>>>>> REPLACE line before the next <<<<<<< SEARCH \(line 5\)/,
    ],
    [
      "an unclosed last block after a good one",
      `${sr("a", "b")}\n<<<<<<< SEARCH\nc\n=======\nd`,
      /SEARCH block 2 \(line 6\) is not closed: a >>>>>>> REPLACE line must follow/,
    ],
    ["a block with no divider", "<<<<<<< SEARCH\nc", /is not closed: a ======= line and a >>>>>>> REPLACE line must follow/],
    ["markers that are not on their own lines", "<<<<<<< SEARCH\nfoo=======\nbar>>>>>>> REPLACE", /is not closed/],
  ])("refuses %s, naming the block and the line", (_name, text, message) => {
    expect(() => parseSearchReplace(text)).toThrow(message);
  });
  it("refuses more blocks than the cap", () => {
    const many = Array.from({ length: MAX_EDIT_BLOCKS + 1 }, () => sr("a", "b")).join("\n");
    expect(() => parseSearchReplace(many)).toThrow(`more than ${MAX_EDIT_BLOCKS} SEARCH/REPLACE blocks`);
    expect(parseSearchReplace(many.slice(0, many.lastIndexOf("<<<<<<<")))).toHaveLength(MAX_EDIT_BLOCKS);
  });
});

describe("SEARCH/REPLACE under hostile input: linear work, capped size", () => {
  // The old regex took ~54 s on the first input below (cubic); here each line is read at most once.
  it("refuses a 1 MB edit by its size without reading a line", () => {
    const stats: ParseStats = { lines: 0 };
    const huge = "<<<<<<< SEARCH\n=======\n".repeat(44_000);
    expect(huge.length).toBeGreaterThan(1_000_000);
    expect(() => parseSearchReplace(huge, stats)).toThrow(`the limit is ${MAX_EDIT_CHARS}`);
    expect(stats.lines).toBe(0);
    expect(() => applySearchReplace(program, huge)).toThrow(EditError);
  });
  it("stops at the first malformed block of a near-limit edit after three lines", () => {
    const stats: ParseStats = { lines: 0 };
    const text = "<<<<<<< SEARCH\n=======\n".repeat(20_000);
    expect(text.length).toBeLessThan(MAX_EDIT_CHARS);
    expect(() => parseSearchReplace(text, stats)).toThrow(
      /has no >>>>>>> REPLACE line before the next <<<<<<< SEARCH \(line 3\)/,
    );
    expect(stats.lines).toBe(3);
  });
  it("reads an unclosed near-limit block once, line by line", () => {
    const stats: ParseStats = { lines: 0 };
    const text = `<<<<<<< SEARCH\n${"x\n".repeat(200_000)}=======\n${"y\n".repeat(50_000)}`;
    expect(() => parseSearchReplace(text, stats)).toThrow(/is not closed: a >>>>>>> REPLACE line must follow/);
    expect(stats.lines).toBe(1 + 200_000 + 1 + 50_000 + 1);
  });
  it("refuses a near-limit SEARCH text that matches nothing and leaves the program as it was", () => {
    const text = sr("    return x * 2.0\n".repeat(20_000), "y");
    expect(text.length).toBeLessThan(MAX_EDIT_CHARS);
    expect(() => applySearchReplace(program, text)).toThrow(/SEARCH block 1 does not match/);
  });
  it("edit_program answers the bomb that blocked the host for ~54 s with a tool error naming the line", async () => {
    const env = new DiscoveryEnvironment({
      task: { metric: "combined_score", direction: "maximize" },
      startProgram: program,
      maxEvals: 1,
      evaluate: async () => ({ valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 }),
    });
    const out = await env.call("edit_program", { edits: "<<<<<<< SEARCH\n=======\n".repeat(4000) });
    expect(out).toMatchObject({ error: true });
    expect(out.output).toMatch(/SEARCH block 1 \(line 1\) has no >>>>>>> REPLACE line before the next <<<<<<< SEARCH \(line 3\)/);
    expect(env.program).toBe(program);
  });
  it("finds a SEARCH text the engine's indexOf is slow on (a…aba…a), matching only at the region's end", () => {
    const pattern = `${"a".repeat(1250)}b${"a".repeat(1249)}`;
    const big = `# EVOLVE-BLOCK-START\nX = "${"a".repeat(100_000)}${pattern}"\n# EVOLVE-BLOCK-END\n`;
    const out = applySearchReplace(big, sr(`${pattern}"`, 'c"'));
    expect(out.endsWith('ac"\n# EVOLVE-BLOCK-END\n')).toBe(true);
    expect(out.length).toBe(big.length - pattern.length + 1);
  });
  it("matches after partial matches, in a second region, past occurrences outside", () => {
    const two =
      "a = 1\n# EVOLVE-BLOCK-START\nx = 0\n# EVOLVE-BLOCK-END\na = 1\n# EVOLVE-BLOCK-START\ny = aaa1\n# EVOLVE-BLOCK-END\n";
    expect(applySearchReplace(two, sr("aa1", "b"))).toBe(two.replace("aaa1", "ab"));
    expect(() => applySearchReplace(two, sr("a = 1", "b"))).toThrow(/matches lines 1-1, outside the editable region/);
  });
  it("refuses an edit whose blocks would scan more of a large program than the work cap", () => {
    const big = `# EVOLVE-BLOCK-START\nX = "${"a".repeat(MAX_PROGRAM_CHARS - 100)}"\n# EVOLVE-BLOCK-END\n`;
    const blocks = Math.floor(MAX_EDIT_WORK / big.length) + 1;
    const edit = Array.from({ length: blocks }, () => sr("X = ", "X = ")).join("\n");
    expect(() => applySearchReplace(big, edit)).toThrow(
      `SEARCH block ${blocks}: the edit's blocks would scan more than ${MAX_EDIT_WORK} characters`,
    );
    expect(() => applySearchReplace(big, sr('X = "', `X = "${"b".repeat(200)}`))).toThrow(
      `the edited program would be ${big.length + 200} characters; the limit is ${MAX_PROGRAM_CHARS}`,
    );
  });
  it("refuses an over-long whole-block replacement", () => {
    expect(() => replaceBlock(program, "x".repeat(MAX_EDIT_CHARS + 1))).toThrow(`the limit is ${MAX_EDIT_CHARS}`);
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
