import { spawn, spawnSync } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { PYTHON_DIR } from "../../src/task/python-env.ts";
import { makeTask, tempDir, write } from "../helpers/fixtures.ts";
import { withPool } from "../helpers/pool.ts";

// The program zygote imports the task's program_preload (numpy and numpy.random by default) and the installed
// modules its seed program imports at its top level, once, so calls do not import them again; a module that starts
// a thread when imported is not kept (a process that forks must have one thread).

/** A module that starts a thread when it is imported. */
const THREADER = "import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n";

/** Runs Python with hone's folder on its path; returns what it printed, parsed. */
function py(code: string, path: string[] = []): unknown {
  const p = spawnSync("python3", ["-c", code], {
    env: { PATH: process.env.PATH, PYTHONPATH: [PYTHON_DIR, ...path].join(":") },
    encoding: "utf8",
  });
  if (p.status !== 0) throw new Error(p.stderr);
  return JSON.parse(p.stdout);
}

describe("what the program zygote imports once", () => {
  it("reads the seed's top-level imports with Python's parser, never running it", () => {
    const seed = [
      "import os, wave",
      "import xml.dom.minidom as md",
      "from email import message",
      "from . import sibling",
      "def f():\n    import tarfile",
      "raise SystemExit('never run')",
    ].join("\n");
    const names = py(`import hone_preload, json; print(json.dumps(hone_preload.seed_modules(${JSON.stringify(seed)})))`);
    expect(names).toEqual(["wave", "xml.dom.minidom", "email"]);
    expect(py(`import hone_preload, json; print(json.dumps(hone_preload.seed_modules("def (")))`)).toEqual([]);
  });

  it("refuses the seed's modules when one starts a thread", () => {
    const dir = tempDir();
    write(join(dir, "threader.py"), THREADER);
    write(join(dir, "quiet.py"), "X = 1\n");
    const ok = (seed: string) =>
      py(`import hone_preload, json; print(json.dumps(hone_preload.seeded_ok(${JSON.stringify(seed)})))`, [dir]);
    expect(ok("import quiet")).toBe(true);
    expect(ok("import quiet\nimport threader")).toBe(false);
  });

  it("starts again without the seed's modules when one starts a thread, and serves", async () => {
    const dir = tempDir();
    write(join(dir, "threader.py"), THREADER);
    const socket = join(dir, "z.sock");
    const config = { socket, preload: [], limits: {}, slots: 1, parent: process.pid, sample: "import threader\n" };
    const z = spawn("python3", [join(PYTHON_DIR, "hone_program_zygote.py"), JSON.stringify(config)], {
      env: { PATH: process.env.PATH, PYTHONPATH: dir },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      let out = "";
      z.stdout.on("data", (d) => {
        out += String(d);
      });
      await expect.poll(() => out, { timeout: 30_000 }).toMatch(/"ready": true/);
      const program = "import sys\ndef run():\n    return 'threader' in sys.modules\n";
      // One call as hone_runtime makes it: the request's line out, the reply framed by its length back.
      const reply = await new Promise<string>((resolve) => {
        const c = connect(socket);
        let got = "";
        c.on("data", (d) => {
          got += String(d);
          const [head, body] = [got.slice(0, got.indexOf("\n")), got.slice(got.indexOf("\n") + 1)];
          if (/^\d+$/.test(head) && body.length >= Number(head)) {
            c.end();
            resolve(body);
          }
        });
        c.write(`${JSON.stringify({ program, ext: ".py", entry: "run", args: [], timeout: 10, memory_mb: 0 })}\n`);
      });
      expect(JSON.parse(reply)).toEqual({ ok: true, value: false });
    } finally {
      z.kill("SIGKILL");
    }
  });

  it("a program finds the seed's modules and numpy.random loaded before its first line", async () => {
    const seed =
      "import sys\nLOADED = [m for m in ('wave', 'numpy.random') if m in sys.modules]\nimport wave\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\ndef run():\n    return LOADED\n";
    const t = loadTaskFolder(
      makeTask(
        "import json\nfrom hone_runtime import run_program\ndef evaluate(program_path):\n    return {'combined_score': 1.0, 'loaded': json.dumps(run_program(program_path, 'run'))}\n",
        { seed },
      ),
    );
    const e = await withPool(t, (pool) => pool.evaluate(t.seedProgram));
    expect(JSON.parse(String(e.metrics.loaded))).toEqual(["wave", "numpy.random"]);
  });
});
