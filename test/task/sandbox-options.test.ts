import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { pythonInfo } from "../../src/task/python-env.ts";
import { bwrapArgs, expandDevices } from "../../src/task/sandbox-layout.ts";
import { makeTask, tempDir } from "../helpers/fixtures.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";

// hone.yaml's sandbox options: `evaluator_read_only` lets an evaluator read a toolchain outside its task folder
// (never the program), `devices` binds device files (a GPU) into the evaluator's and programs' sandboxes.

describe("sandbox options in hone.yaml", () => {
  it("expands device globs to the device files that exist, and binds them", () => {
    expect(expandDevices(["/dev/nul*", "/dev/nonexistent*", "/nope/x*"])).toEqual(["/dev/null"]);
    const args = bwrapArgs({ python: pythonInfo("python3"), readOnly: [], env: {}, devices: ["/dev/nul*"] }, ["true"]);
    expect(args.join(" ")).toContain("--dev-bind /dev/null /dev/null");
  });

  it.each([
    ["evaluator_read_only", "/proc"],
    ["evaluator_read_only", "/proc/1/root"],
    ["evaluator_read_only", "/"],
    ["evaluator_read_only", "/dev/shm"],
    ["evaluator_read_only", "/tmp"],
    ["python_path", "../../../../../../../sys"],
  ])("refuses %s naming %s: it would cover the sandbox's own mounts", (field, path) => {
    const dir = makeTask("def evaluate(p):\n    return {'combined_score': 1.0}\n", {
      honeYaml: `${field}: [${JSON.stringify(path)}]\n`,
    });
    let refusal: unknown;
    try {
      loadTaskFolder(dir);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toMatchObject({ exit: "badTask", file: join(dir, "hone.yaml"), field });
    expect(String(refusal)).toMatch(/would cover the sandbox's own/);
  });

  it("accepts folders beside the sandbox's own mounts", () => {
    const paths = ["/procfs-tools", "/tmp/toolchain", "/devel", "/usr/lib"];
    const dir = makeTask("def evaluate(p):\n    return {'combined_score': 1.0}\n", {
      honeYaml: `evaluator_read_only: ${JSON.stringify(paths)}\n`,
    });
    expect(loadTaskFolder(dir).evaluatorReadOnly).toEqual(paths);
  });

  it("evaluator_read_only: the evaluator reads the folder, the program does not", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    const tool = join(tempDir(), "toolchain");
    mkdirSync(tool);
    writeFileSync(join(tool, "VERSION"), "1.2.3");
    const dir = makeTask(
      `import json\nfrom hone_runtime import run_program\ndef evaluate(p):\n    v = open(${JSON.stringify(join(tool, "VERSION"))}).read()\n    seen = run_program(p, 'run')\n    return {'combined_score': 1.0, 'version': v, 'seen': json.dumps(seen)}\n`,
      {
        seed: `# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\ndef run():\n    import os\n    return os.path.exists(${JSON.stringify(join(tool, "VERSION"))})\n`,
        honeYaml: `evaluator_read_only: [${JSON.stringify(tool)}]\n`,
      },
    );
    const task = loadTaskFolder(dir);
    const pool = await EvaluatorPool.start(task, { size: 1 });
    try {
      for (const e of [await evaluateProgram(task, task.seedProgram), await pool.evaluate(task.seedProgram)]) {
        expect(e.metrics.version).toBe("1.2.3");
        expect(e.metrics.seen).toBe("false");
      }
    } finally {
      pool.close();
    }
  });
});
