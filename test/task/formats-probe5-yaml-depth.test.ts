import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { loadTaskFolderNeedsFirst } from "../../src/task/folder-refusal.ts";
import { readRegistry } from "../../src/task/registry.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

// A task's YAML nested thousands deep used to reach the yaml package's composer, which recurses once per level: the
// load failed with "Maximum call stack size exceeded" (and PyYAML's traceback, "exit 1"), or, when the stack ran out
// inside V8's regular-expression compiler, node aborted with "FATAL ERROR: RegExpCompiler Allocation failed".

const SEED = "# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\n";
const EVAL = "def evaluate(program_path):\n    return {'combined_score': 1.0}\n";
const CONFIG = "prompt:\n  system_message: a task\n";
const flow = (n: number) => `x: ${"[".repeat(n)}${"]".repeat(n)}\n`;
const block = (n: number) => `x:\n${"- ".repeat(n)}1\n`;

function folder(files: Record<string, string>): string {
  const dir = join(tempDir("hone-deep-"), "task");
  for (const [name, text] of Object.entries(files)) write(join(dir, name), text);
  return dir;
}

// Valid YAML, refused for its depth: the message says so (never "is not valid YAML"), with the limit and what to do.
const TOO_DEEP =
  /: is refused: its mappings and lists nest inside each other more than 64 levels deep \(at line \d+\); hone reads a task's YAML at most 64 levels deep .*: flatten it/;

describe("task YAML nested thousands deep", () => {
  it.each([
    ["config.yaml", "flow", `${CONFIG}${flow(5000)}`],
    ["config.yaml", "block", `${CONFIG}${block(5000)}`],
    ["hone.yaml", "flow", flow(5000)],
    ["hone.yaml", "block", block(5000)],
  ])("%s (%s collections) is refused naming the file and the line", (name, _kind, text) => {
    const dir = folder({ "initial_program.py": SEED, "evaluator.py": EVAL, "config.yaml": CONFIG, [name]: text });
    expect(() => loadTaskFolder(dir)).toThrow(TOO_DEEP);
    expect(() => loadTaskFolder(dir)).toThrow(new RegExp(`${name.replace(".", "\\.")}: is refused: `));
    expect(() => loadTaskFolder(dir)).not.toThrow(/not valid YAML/);
    expect(() => loadTaskFolderNeedsFirst(dir)).toThrow(TOO_DEEP);
  });

  it("a tasks.yaml nested thousands deep is refused the same way", () => {
    const root = tempDir("hone-deep-reg-");
    write(join(root, "tasks.yaml"), `tasks: []\n${flow(5000)}`);
    expect(() => readRegistry(root)).toThrow(TOO_DEEP);
    expect(() => readRegistry(root)).toThrow(/tasks\.yaml: is refused: /);
  });

  it("a config nested as deep as real ones (and then some) still loads", () => {
    const nested = `${CONFIG}x: ${"[".repeat(40)}1${"]".repeat(40)}\n`;
    expect(loadTaskFolder(folder({ "initial_program.py": SEED, "evaluator.py": EVAL, "config.yaml": nested })).description).toBe(
      "a task",
    );
  });
});
