import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { bwrapCapsTmpfs, DEFAULT_TMP_MB, helpOffersSize } from "../../src/task/sandbox-layout.ts";
import { runSealed } from "../../src/task/sealed-command.ts";
import { findExecutable } from "../../src/which.ts";
import { hone } from "../helpers/cli.ts";
import { makeTask, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// A sandbox's /tmp and /dev/shm are tmpfs mounts, kept in the host's memory: an evaluator, a harness program or the
// programs they run must not be able to fill them without bound (a program writing 20 GB would exhaust the host).
// bubblewrap (0.7 and later) caps them with --size; the root bubblewrap builds (a tmpfs too) is made read-only.

/** An evaluator that reports the size (MB) of its /tmp, its /dev/shm and a program's /tmp, as metrics. */
const MEASURING = `import os
from hone_runtime import run_program

def mb(path):
    s = os.statvfs(path)
    return s.f_blocks * s.f_frsize / (1 << 20)

def evaluate(program_path):
    return {"combined_score": 1.0, "tmp_mb": mb("/tmp"), "shm_mb": mb("/dev/shm"),
            "program_tmp_mb": float(run_program(program_path, "run", timeout=20))}
`;
const MEASURED = `# EVOLVE-BLOCK-START
X = 1
# EVOLVE-BLOCK-END
import os

def run():
    s = os.statvfs("/tmp")
    return s.f_blocks * s.f_frsize / (1 << 20)
`;

/** An evaluator that writes `mb` MB into `folder` (its working directory unless named), then scores 1. */
const filling = (folder: string, mb: number) => `import os
from hone_runtime import run_program

def evaluate(program_path):
    block = b"x" * (1 << 20)
    with open(os.path.join(${JSON.stringify(folder)}, "fill"), "wb") as f:
        for _ in range(${mb}):
            f.write(block)
    return {"combined_score": float(run_program(program_path, "run", timeout=20))}
`;

const SMALL = "tmp_mb: 32\n";

describe("the sandbox's /tmp and /dev/shm are capped", () => {
  it("at the default size, for the evaluator and its programs, when hone.yaml sets none", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    if (!bwrapCapsTmpfs()) return ctx.skip();
    const task = loadTaskFolder(makeTask(MEASURING, { seed: MEASURED }));
    const e = await evaluateProgram(task, task.seedProgram);
    expect(e.reason).toBeUndefined();
    expect(e.metrics).toMatchObject({ tmp_mb: DEFAULT_TMP_MB, shm_mb: DEFAULT_TMP_MB, program_tmp_mb: DEFAULT_TMP_MB });
  });

  it("at hone.yaml's tmp_mb, in the cold path and the warm pool alike", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    if (!bwrapCapsTmpfs()) return ctx.skip();
    const task = loadTaskFolder(makeTask(MEASURING, { seed: MEASURED, honeYaml: SMALL }));
    expect(task.tmpMb).toBe(32);
    const cold = await evaluateProgram(task, task.seedProgram);
    expect(cold.metrics).toMatchObject({ tmp_mb: 32, shm_mb: 32, program_tmp_mb: 32 });
    const pool = await EvaluatorPool.start(task, { size: 1 });
    try {
      const warm = await pool.evaluate(task.seedProgram);
      expect(warm.metrics).toMatchObject({ tmp_mb: 32, shm_mb: 32, program_tmp_mb: 32 });
    } finally {
      pool.close();
    }
  });

  it("an evaluator whose own subprocess (a build, say) ran out of room and that exits without a result is told of tmp_mb", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    if (!bwrapCapsTmpfs()) return ctx.skip();
    const building = `import os, subprocess, sys

def evaluate(program_path):
    r = subprocess.run([sys.executable, "-c", "open('big', 'wb').write(b'x' * (64 << 20))"], capture_output=True, text=True)
    sys.stderr.write(r.stderr)
    sys.stderr.flush()
    os._exit(3)
`;
    const task = loadTaskFolder(makeTask(building, { honeYaml: SMALL }));
    const e = await evaluateProgram(task, task.seedProgram);
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/exited with code 3 without a result.*No space left on device/s);
    expect(e.reason).toMatch(/hold at most 32 MB each .*raise tmp_mb in the task's hone\.yaml/);
  });

  it("an evaluator writing past the cap gets ENOSPC: the evaluation fails with the reason, and the pool goes on", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    if (!bwrapCapsTmpfs()) return ctx.skip();
    const dir = makeTask(filling(".", 64), { honeYaml: SMALL });
    const task = loadTaskFolder(dir);
    const cold = await evaluateProgram(task, task.seedProgram);
    expect(cold.valid).toBe(false);
    expect(cold.reason).toMatch(/No space left on device/);
    expect(cold.reason).toMatch(/hold at most 32 MB each .*raise tmp_mb in the task's hone\.yaml/);
    const pool = await EvaluatorPool.start(task, { size: 1 });
    try {
      for (let i = 0; i < 2; i++) {
        const warm = await pool.evaluate(task.seedProgram);
        expect(warm.valid).toBe(false);
        expect(warm.reason).toMatch(/No space left on device.*hold at most 32 MB/);
      }
    } finally {
      pool.close();
    }
    // Under the cap the same evaluator scores: the folder was emptied between evaluations.
    writeFileSync(join(dir, "evaluator.py"), filling(".", 8));
    const fits = await evaluateProgram(loadTaskFolder(dir), task.seedProgram);
    expect(fits.score).toBe(1);
  });

  it("so is /dev/shm", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    if (!bwrapCapsTmpfs()) return ctx.skip();
    const task = loadTaskFolder(makeTask(filling("/dev/shm", 64), { honeYaml: SMALL }));
    const e = await evaluateProgram(task, task.seedProgram);
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/No space left on device/);
  });

  it("the sandbox's root (a tmpfs bubblewrap makes) is read-only: no folder outside /tmp and /dev/shm takes writes", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    for (const folder of ["/", "/etc"]) {
      const task = loadTaskFolder(makeTask(filling(folder, 1)));
      const e = await evaluateProgram(task, task.seedProgram);
      expect(e.valid, folder).toBe(false);
      expect(e.reason, folder).toMatch(/Read-only file system/);
    }
  });

  it("the parent folders bubblewrap makes for its binds are read-only too (as root they are the evaluator's own)", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    // The task folder is bound at its own path; the folder above it was made by bubblewrap in the sandbox's root.
    const parent = mkdtempSync(join("/var/tmp", "hone-probe6-"));
    try {
      const dir = join(parent, "task");
      mkdirSync(dir);
      const made = makeTask(filling(parent, 1));
      for (const f of ["initial_program.py", "evaluator.py", "config.yaml"])
        writeFileSync(join(dir, f), readFileSync(join(made, f)));
      const e = await evaluateProgram(loadTaskFolder(dir), loadTaskFolder(dir).seedProgram);
      expect(e.valid).toBe(false);
      expect(e.reason).toMatch(/Read-only file system/);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it("a harness or method program run sealed gets the default cap and a read-only root", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    if (!bwrapCapsTmpfs()) return ctx.skip();
    const dir = mkdtempSync(join(tmpdir(), "hone-probe6-sealed-"));
    try {
      writeFileSync(
        join(dir, "prog.py"),
        [
          "import os",
          "s = os.statvfs('/tmp')",
          "print(s.f_blocks * s.f_frsize >> 20)",
          "try:",
          "    open('/root-fill', 'wb').write(b'x')",
          "    print('wrote')",
          "except OSError as e:",
          "    print(e.errno)",
        ].join("\n"),
      );
      const r = await runSealed({
        argv: ["python3", "prog.py"],
        readOnly: [dir],
        writable: [],
        cwd: dir,
        env: {},
        timeoutMs: 30_000,
      });
      expect(r.stdout.trim().split("\n")).toEqual([String(DEFAULT_TMP_MB), "30"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("hone.yaml's tmp_mb", () => {
  it("is taken in MB, and refused below 16 MB naming the file and field", () => {
    expect(loadTaskFolder(makeTask(filling(".", 1), { honeYaml: "tmp_mb: 4096\n" })).tmpMb).toBe(4096);
    expect(() => loadTaskFolder(makeTask(filling(".", 1), { honeYaml: "tmp_mb: 1\n" }))).toThrow(
      /hone\.yaml \(tmp_mb\): Too small: expected number to be >=16/,
    );
  });
});

/**
 * `hone doctor`'s bubblewrap line with a bwrap on PATH that answers --help with `help` and runs the real one otherwise
 * (refusing --size as an old one does, when its help has none).
 */
async function doctorWith(help: string): Promise<{ ok: boolean; found: string } | undefined> {
  const bin = join(tempDir(), "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "help.txt"), help);
  // requireTool has found it on PATH (/usr/bin here; /usr/local/bin or a Nix profile elsewhere).
  const real = findExecutable("bwrap") as string;
  const refuseSize = helpOffersSize(help)
    ? ""
    : 'for a in "$@"; do if [ "$a" = --size ]; then echo "bwrap: Unknown option --size" >&2; exit 1; fi; done\n';
  const script = `#!/bin/sh\nif [ "$1" = --help ]; then cat "${join(bin, "help.txt")}"; exit 0; fi\n${refuseSize}exec ${real} "$@"\n`;
  writeFileSync(join(bin, "bwrap"), script);
  chmodSync(join(bin, "bwrap"), 0o755);
  const r = await hone(["doctor", "--json"], { env: { PATH: `${bin}:${process.env.PATH}` } });
  const checks = JSON.parse(r.stdout).checks as { id: string; ok: boolean; found: string }[];
  return checks.find((c) => c.id === "bubblewrap");
}

const HELP_06 = "usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]\n    --tmpfs DEST                 Mount new tmpfs on DEST\n";
const HELP_08 = `${HELP_06}    --size BYTES                 Set size of next argument (only for --tmpfs)\n`;

describe("a bubblewrap that cannot cap a tmpfs (before 0.7)", () => {
  it("is told from its help text", () => {
    expect(helpOffersSize(HELP_08)).toBe(true);
    expect(helpOffersSize(HELP_06)).toBe(false);
    expect(helpOffersSize("    --size-of-something\n")).toBe(false);
  });

  it("still sandboxes, and hone doctor says /tmp and /dev/shm are not capped", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    const old = await doctorWith(HELP_06);
    expect(old?.ok).toBe(true);
    expect(old?.found).toMatch(/bwrap works here .*cannot cap the size of a sandbox's \/tmp and \/dev\/shm .*bubblewrap 0\.7/);
    const current = await doctorWith(HELP_08);
    expect(current?.found).toMatch(/\/tmp and \/dev\/shm are capped at 256 MB \(a task's hone\.yaml may set tmp_mb\)/);
  });
});
