import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeTask, ROOT, tempDir } from "../helpers/fixtures.ts";

// The kernel's session keyring is inherited through every fork, namespace and change of user: a program, warm or
// cold, with bubblewrap or without, read a secret key of hone's login session ("s3cr3t-token") and planted a key
// there that hone's other processes (and later programs) saw; so did a program imported by its evaluator, as many
// upstream evaluators do, and a harness or method given as a program (runSealed). A call, each evaluator's process
// and a sealed command now join a keyring of its own and a seccomp filter
// refuse add_key, request_key and keyctl (ENOSYS, as from a kernel without keyrings).
// Each case runs hone in a child process that first joins a session keyring of its own holding the secret, so the
// developer's own keyring is never touched; HONE_NO_BWRAP is read once per process, so both paths run here.

const EVALUATOR = `import json
from hone_runtime import run_program, ProgramError
def evaluate(program_path):
    try:
        out = run_program(program_path, 'run', timeout=20)
    except ProgramError as e:
        return {'combined_score': 0.0, 'validity': 0.0, 'error': str(e)}
    return {'combined_score': 1.0, 'validity': 1.0, 'seen': json.dumps(out)}
`;

/** Looks for the host's secret key in its session keyring, reads it, plants a key of its own; errors as -errno. */
const PROGRAM = `def run():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    nr = {'x86_64': (248, 250), 'aarch64': (217, 219)}[__import__('os').uname().machine]
    add_key, keyctl = nr
    out, buf = {}, ctypes.create_string_buffer(4096)
    kid = libc.syscall(keyctl, 10, ctypes.c_long(-3), b'user', b'host-secret', 0)  # KEYCTL_SEARCH in @s
    out['found'] = 'yes' if kid >= 0 else -ctypes.get_errno()
    if kid >= 0:
        n = libc.syscall(keyctl, 11, ctypes.c_long(kid), buf, 4096)  # KEYCTL_READ
        out['secret'] = buf.raw[:n].decode() if n >= 0 else -ctypes.get_errno()
    planted = libc.syscall(add_key, b'user', b'planted', b'by-program', 10, ctypes.c_long(-3))
    out['planted'] = 'yes' if planted >= 0 else -ctypes.get_errno()
    return out
`;

/** An evaluator that imports the program into its own process, as many upstream ones do (OpenEvolve's examples). */
const IMPORTING = `import importlib.util, json
def evaluate(program_path):
    spec = importlib.util.spec_from_file_location('program', program_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {'combined_score': 1.0, 'validity': 1.0, 'seen': json.dumps(module.run())}
`;

/** Evaluates the program on each task warm (the pool) and cold, prints what it saw each time. */
const DRIVER = (tasks: Record<string, string>, program: string) => `
import { readFileSync } from "node:fs";
import { loadTaskFolder } from ${JSON.stringify(join(ROOT, "src/task/discovery-task.ts"))};
import { evaluateProgram } from ${JSON.stringify(join(ROOT, "src/task/evaluator.ts"))};
import { EvaluatorPool } from ${JSON.stringify(join(ROOT, "src/task/evaluator-pool.ts"))};
import { modelPort, runSealed } from ${JSON.stringify(join(ROOT, "src/task/sealed-command.ts"))};
const source = readFileSync(${JSON.stringify(program)}, "utf8");
const seen = (e) => (e.metrics.seen === undefined ? e.metrics : JSON.parse(String(e.metrics.seen)));
const out = {};
for (const [name, dir] of Object.entries(${JSON.stringify(tasks)})) {
  const task = loadTaskFolder(dir);
  const pool = await EvaluatorPool.start(task, { size: 1 });
  let warm;
  try { warm = seen(await pool.evaluate(source)); } finally { pool.close(); }
  out[name] = { warm, cold: seen(await evaluateProgram(task, source)) };
}
const dir = ${JSON.stringify(dirname(program))};
const sealed = await runSealed({ argv: ["python3", "-c", source + "\\nimport json\\nprint(json.dumps(run()))"], readOnly: [], writable: [dir],
  cwd: dir, env: {}, timeoutMs: 30_000, modelSocketDir: dir, modelPort: await modelPort() });
out.sealedCommand = JSON.parse(sealed.stdout.trim().split("\\n").at(-1) ?? "null");
console.log(JSON.stringify(out));
`;

/** Joins a session keyring of its own holding the secret, runs the driver, then says whether a key was planted. */
const WRAPPER = `import ctypes, json, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
add_key, keyctl = {'x86_64': (248, 250), 'aarch64': (217, 219)}[os.uname().machine]
if libc.syscall(keyctl, 1, b'hone-sealed-probe') < 0:  # KEYCTL_JOIN_SESSION_KEYRING
    sys.exit('no session keyring: %s' % os.strerror(ctypes.get_errno()))
libc.syscall(add_key, b'user', b'host-secret', b's3cr3t-token', 12, ctypes.c_long(-3))
run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
if run.returncode != 0:
    sys.exit(run.stderr[-3000:])
seen = json.loads(run.stdout.splitlines()[-1])
planted = libc.syscall(keyctl, 10, ctypes.c_long(-3), b'user', b'planted', 0)
print(json.dumps(dict(seen, host_planted=planted >= 0)))
`;

const ENOSYS = 38;
const KNOWN = process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64");

describe("a program can neither read nor write hone's session keyring", () => {
  it.runIf(KNOWN).each(["bubblewrap", "HONE_NO_BWRAP=1"])("[%s] contained or imported, warm and cold: refused", (how) => {
    const dir = tempDir("hone-keyring-probe-");
    const tasks = { contained: makeTask(EVALUATOR, { timeout: 30 }), imported: makeTask(IMPORTING, { timeout: 30 }) };
    writeFileSync(join(dir, "program.py"), PROGRAM);
    writeFileSync(join(dir, "driver.mts"), DRIVER(tasks, join(dir, "program.py")));
    writeFileSync(join(dir, "wrapper.py"), WRAPPER);
    const env = { ...process.env, HONE_NO_BWRAP: how === "bubblewrap" ? "" : "1" };
    const tsx = join(ROOT, "node_modules/.bin/tsx");
    const out = execFileSync("python3", [join(dir, "wrapper.py"), tsx, join(dir, "driver.mts")], {
      env,
      encoding: "utf8",
      timeout: 180_000,
    });
    const refused = { found: -ENOSYS, planted: -ENOSYS };
    const both = { warm: refused, cold: refused };
    expect(JSON.parse(out.trim().split("\n").at(-1) as string)).toEqual({
      contained: both,
      imported: both,
      sealedCommand: refused,
      host_planted: false,
    });
  });
});
