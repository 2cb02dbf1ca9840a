import { rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { detectLayout } from "../../src/task/layouts.ts";
import { tempDir, write } from "../helpers/fixtures.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";

const SEED = "# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\n";
const EVAL = "def evaluate(program_path):\n    return {'combined_score': 1.0}\n";
const CONFIG = "prompt:\n  system_message: a task\n";

function folder(files: Record<string, string>): string {
  const dir = join(tempDir("hone-linked-"), "task");
  for (const [name, text] of Object.entries(files)) write(join(dir, name), text);
  return dir;
}

/** A file outside every task folder, as a secret of the machine would be. */
function outside(text: string): string {
  const file = join(tempDir("hone-secret-"), "secret.txt");
  write(file, text);
  return file;
}

describe("a task folder whose seed or evaluator is a link out of it", () => {
  it("refuses a seed linked to a file outside, naming the link and where it leads (never reading it)", () => {
    const dir = folder({ "evaluator.py": EVAL, "config.yaml": CONFIG });
    const secret = outside("AWS_SECRET_ACCESS_KEY=abc\n");
    symlinkSync(secret, join(dir, "initial_program.py"));
    expect(() => loadTaskFolder(dir)).toThrow(/initial_program\.py: is a link to .*secret\.txt, outside the task folder/);
  });

  // The config's system message and a SimpleTES folder's description are the model's task text too.
  it("refuses a config or a task description linked to a file outside", () => {
    const withConfig = folder({ "initial_program.py": SEED, "evaluator.py": EVAL });
    symlinkSync(outside("prompt:\n  system_message: AWS_SECRET_ACCESS_KEY=abc\n"), join(withConfig, "config.yaml"));
    expect(() => loadTaskFolder(withConfig)).toThrow(/config\.yaml: is a link to .*secret\.txt, .*the config must lie inside it/);
    const described = folder({ "init_program.py": SEED, "evaluator.py": EVAL });
    symlinkSync(outside("AWS_SECRET_ACCESS_KEY=abc\n"), join(described, "task.txt"));
    expect(() => loadTaskFolder(described)).toThrow(/task\.txt: is a link to .*secret\.txt, .*the task description must lie/);
  });

  it("refuses a seed in another language linked out, and /etc/passwd itself", () => {
    const dir = folder({ "evaluator.py": EVAL, "config.yaml": CONFIG });
    symlinkSync("/etc/passwd", join(dir, "initial_program.r"));
    expect(() => detectLayout(dir)).toThrow(/is a link to \/etc\/passwd/);
  });

  it("refuses an evaluator linked out to a folder hone.yaml does not list (its sandbox would not find it), in both layouts", () => {
    const flat = folder({ "initial_program.py": SEED, "config.yaml": CONFIG });
    symlinkSync(outside(EVAL), join(flat, "evaluator.py"));
    expect(() => loadTaskFolder(flat)).toThrow(
      /evaluator\.py: is a link to .*secret\.txt, outside the task folder .* and every folder hone\.yaml lists in python_path or evaluator_read_only: .*Copy the file into the task folder, or list its folder \(.*hone-secret-\w+\) in hone\.yaml's evaluator_read_only/,
    );
    const sky = folder({ "initial_program.py": SEED, "config.yaml": CONFIG, "evaluator/Dockerfile": "FROM x\n" });
    symlinkSync(outside(EVAL), join(sky, "evaluator", "evaluator.py"));
    expect(() => loadTaskFolder(sky)).toThrow(/evaluator\/evaluator\.py: is a link to/);
  });

  it("still takes links that stay inside, and a folder reached through a link", () => {
    const dir = folder({ "programs/seed.py": SEED, "evaluator.py": EVAL, "config.yaml": CONFIG });
    symlinkSync("programs/seed.py", join(dir, "initial_program.py"));
    expect(loadTaskFolder(dir).seedProgram).toBe(SEED);
    const via = join(tempDir("hone-via-"), "link");
    symlinkSync(dir, via);
    expect(loadTaskFolder(via).seedProgram).toBe(SEED);
  });
});

// OpenEvolve's examples share an evaluator between variants of a task (`evaluator.py -> ../shared/evaluator.py`); with
// hone.yaml listing ../shared, the evaluator's sandbox sees the file, and the folder ran.
describe("an evaluator linked to a folder its sandbox sees too", () => {
  /** <root>/task/evaluator.py -> ../shared/evaluator.py, and hone.yaml as given. */
  function shared(honeYaml: string | undefined, layout: "flat" | "sky" = "flat"): string {
    const root = tempDir("hone-shared-");
    write(join(root, "shared", "evaluator.py"), EVAL);
    write(join(root, "other", "evaluator.py"), EVAL);
    const dir = join(root, "task");
    write(join(dir, "initial_program.py"), SEED);
    write(join(dir, "config.yaml"), CONFIG);
    if (honeYaml !== undefined) write(join(dir, "hone.yaml"), honeYaml);
    if (layout === "flat") symlinkSync("../shared/evaluator.py", join(dir, "evaluator.py"));
    else {
      write(join(dir, "evaluator", "Dockerfile"), "FROM x\n");
      symlinkSync("../../shared/evaluator.py", join(dir, "evaluator", "evaluator.py"));
    }
    return dir;
  }

  it.each([
    ["python_path", "python_path: [../shared]\n"],
    ["evaluator_read_only", "evaluator_read_only: [../shared]\n"],
    ["both", "python_path: [../shared]\nevaluator_read_only: [../shared]\n"],
    ["an absolute path", undefined],
  ])("loads when hone.yaml lists its folder (%s)", (_how, honeYaml) => {
    const dir = shared(honeYaml ?? "");
    if (honeYaml === undefined)
      write(join(dir, "hone.yaml"), `evaluator_read_only: [${JSON.stringify(join(dir, "..", "shared"))}]\n`);
    const task = loadTaskFolder(dir);
    expect(task.evaluatorPath).toBe(join(dir, "evaluator.py"));
    expect(task.seedProgram).toBe(SEED);
  });

  it("loads in the SkyDiscover layout too, and with a manifest's python_path", () => {
    expect(loadTaskFolder(shared("python_path: [../shared]\n", "sky")).evaluatorPath).toMatch(/evaluator\/evaluator\.py$/);
    const dir = shared(undefined);
    expect(() => loadTaskFolder(dir)).toThrow(/is a link to/);
    expect(loadTaskFolder(dir, { pythonPath: [join(dir, "..", "shared")] }).evaluatorPath).toBe(join(dir, "evaluator.py"));
  });

  it("refuses it when hone.yaml lists another folder, or none, naming the link, its target and what to do", () => {
    for (const honeYaml of [undefined, "evaluator_read_only: [../other]\npython_path: [../other]\n"]) {
      const dir = shared(honeYaml);
      expect(() => loadTaskFolder(dir)).toThrow(
        /task\/evaluator\.py: is a link to .*\/shared\/evaluator\.py, outside the task folder .*: the evaluator's sandbox sees only those, so it would not find the file\. Copy the file into the task folder, or list its folder \(.*\/shared\) in hone\.yaml's evaluator_read_only/,
      );
    }
  });

  it("still refuses a seed linked there: a seed's text goes to the model", () => {
    const dir = shared("python_path: [../shared]\nevaluator_read_only: [../shared]\n");
    write(join(dir, "..", "shared", "seed.py"), SEED);
    rmSync(join(dir, "initial_program.py"));
    symlinkSync("../shared/seed.py", join(dir, "initial_program.py"));
    expect(() => loadTaskFolder(dir)).toThrow(
      /initial_program\.py: is a link to .*seed\.py, outside the task folder .*: the seed program must lie inside it/,
    );
  });

  it("runs under bubblewrap: the evaluator's sandbox finds the file through the link", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const dir = shared("evaluator_read_only: [../shared]\n");
    const task = loadTaskFolder(dir);
    expect((await evaluateProgram(task, task.seedProgram)).metrics.combined_score).toBe(1);
    // Without the folder listed, the sandbox does not find it: what the refusal says.
    const unlisted = await evaluateProgram({ ...task, evaluatorReadOnly: [] }, task.seedProgram);
    expect(unlisted.reason).toMatch(/No such file or directory/);
  });
});

describe("a folder of task folders given as one task", () => {
  it("says it holds task folders, naming some, and how to list them", () => {
    const root = join(tempDir("hone-suite-"), "algotune");
    for (const name of ["fft_convolution", "lu_factorization"]) {
      write(join(root, name, "initial_program.py"), SEED);
      write(join(root, name, "evaluator.py"), EVAL);
      write(join(root, name, "config.yaml"), CONFIG);
    }
    write(join(root, "README.md"), "# suite\n");
    expect(() => detectLayout(root)).toThrow(
      /algotune: has no seed program: it is a folder of task folders \(fft_convolution, lu_factorization\); name one of them as the task, or list them all with --tasks-dir .*algotune/,
    );
  });

  it("keeps the plain refusal for a folder that holds none", () => {
    const dir = folder({ "evaluator.py": EVAL, "notes/readme.md": "x\n" });
    expect(() => detectLayout(dir)).toThrow(/has no seed program; expected one of initial_program\.py/);
  });
});
