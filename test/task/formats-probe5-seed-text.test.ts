import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

// A seed that is not UTF-8 (Latin-1 "café" in a comment) was read with each bad byte turned into U+FFFD: hone
// scored and evolved another program than the file, and said nothing. OpenEvolve cannot read such a file at all.

const HEAD = "# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\n";

function folderWithSeed(seed: Buffer): string {
  const dir = join(tempDir("hone-seedtext-"), "task");
  write(join(dir, "evaluator.py"), "def evaluate(program_path):\n    return {'combined_score': 1.0}\n");
  write(join(dir, "config.yaml"), "prompt:\n  system_message: a task\n");
  writeFileSync(join(dir, "initial_program.py"), seed);
  return dir;
}

describe("a seed program that is not UTF-8", () => {
  it("is refused naming the file, the first bad byte, its offset and line", () => {
    const dir = folderWithSeed(Buffer.concat([Buffer.from(HEAD), Buffer.from([0x23, 0x20, 0x63, 0x61, 0x66, 0xe9, 0x0a])]));
    expect(() => loadTaskFolder(dir)).toThrow(
      /initial_program\.py: is not UTF-8 text: byte 0xe9 at byte offset 51 \(line 4\) is not valid UTF-8; save the seed program as UTF-8/,
    );
  });

  it("names the lead byte of a sequence cut short at the end of the file, and a stray continuation byte", () => {
    const cut = folderWithSeed(Buffer.concat([Buffer.from(HEAD), Buffer.from([0x23, 0xe2, 0x82])]));
    expect(() => loadTaskFolder(cut)).toThrow(/byte 0xe2 at byte offset 47 \(line 4\)/);
    const stray = folderWithSeed(Buffer.concat([Buffer.from([0x80]), Buffer.from(HEAD)]));
    expect(() => loadTaskFolder(stray)).toThrow(/byte 0x80 at byte offset 0 \(line 1\)/);
  });

  it("UTF-8 text of every width still loads as it is", () => {
    const seed = `${HEAD}# café, ∑, 𝔼\n`;
    expect(loadTaskFolder(folderWithSeed(Buffer.from(seed))).seedProgram).toBe(seed);
  });
});
