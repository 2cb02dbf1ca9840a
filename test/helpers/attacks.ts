import { readdirSync, readFileSync } from "node:fs";

/** The argument every attack's leftover processes run `sleep` with, so the host can find any that survive. */
// `sleep` takes it as seconds. Each test file runs in a process of its own, and files run in parallel: the mark
// carries this process's id, so one file never counts another file's processes, still running by design, as its own.
export const SURVIVOR_MARK = `31337.${process.pid}`;

/** Host processes still running `sleep SURVIVOR_MARK` (leftovers of an attack that escaped its evaluation). */
export function survivors(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (argv.includes(SURVIVOR_MARK)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * Python: a function `name()` that starts a process which leaves the session, execs `file` with `argv` (Python
 * expressions) and outlives its parent unless its namespace dies.
 */
const pyDaemon = (name: string, file: string, argv: string) => `
def ${name}():
    import os, sys
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                os.execv(${file}, ${argv})
            finally:
                os._exit(0)
        os._exit(0)
`;

/** Python: `_hone_daemon()` starts `sleep SURVIVOR_MARK` as a daemon. */
export const PY_DAEMON = pyDaemon("_hone_daemon", "'/bin/sleep'", `['sleep', '${SURVIVOR_MARK}']`);

/**
 * Python: `_hone_heavy_daemon()` starts a daemon that is an interpreter which has written to 512 MB of memory before
 * it sleeps, so that once killed it takes the kernel tens of milliseconds to be gone.
 */
const HEAVY = "import time\\nb = bytearray(512 << 20)\\nfor i in range(0, len(b), 4096): b[i] = 1\\ntime.sleep(300)";
export const PY_HEAVY_DAEMON = pyDaemon(
  "_hone_heavy_daemon",
  "sys.executable",
  `[sys.executable, '-c', '${HEAVY}', '${SURVIVOR_MARK}']`,
);

/**
 * Python: `_hone_heavy_leftover()` starts the same interpreter as a plain child, in the caller's session and process
 * group, and returns: what an evaluation leaves when it does not wait for what it started.
 */
export const PY_HEAVY_LEFTOVER = `
def _hone_heavy_leftover():
    import subprocess, sys
    subprocess.Popen([sys.executable, '-c', '${HEAVY}', '${SURVIVOR_MARK}'])
`;

/**
 * Python run at a program's import: every forging and sabotage route the first sealed-evaluation report found,
 * tried at once. It forges result files wherever it can write, leaves a daemon that keeps forging, and kills
 * every process it can see. A sealed evaluation scores the program exactly as if none of this were there.
 */
export const PY_FORGER = `
import glob as _g, json as _j, os as _o, signal as _s, time as _t
${PY_DAEMON}
_FAKE = _j.dumps({"metrics": {"combined_score": 99999.0, "validity": 1.0}, "artifacts": {}})
def _hone_forge():
    for d in _g.glob('/tmp/**/', recursive=True) + _g.glob('/tmp/hone-*/**/', recursive=True):
        try:
            _o.mkdir(_o.path.join(d, 'hone_result.json.tmp'))  # block the evaluator's own write
        except Exception:
            pass
        for name in ('hone_result.json', 'result.json'):
            try:
                with open(_o.path.join(d, name), 'w') as f:
                    f.write(_FAKE)
            except Exception:
                pass
_hone_forge()
try:
    _o.kill(-1, _s.SIGKILL)
except Exception:
    pass
_hone_daemon()
if _o.fork() == 0:  # a second daemon keeps forging every later evaluation's files
    _o.setsid()
    if _o.fork() == 0:
        for _ in range(400):
            _hone_forge()
            _t.sleep(0.05)
    _o._exit(0)
`;

/** Python: writes a forged reply into every descriptor it holds (its own result pipe among them). */
export const PY_FD_FORGER = `
import json as _j, os as _o
for _fd in range(3, 256):
    try:
        _o.write(_fd, (_j.dumps({"ok": True, "value": 99999.0, "metrics": {"combined_score": 99999.0}}) + "\\n").encode())
    except Exception:
        pass
`;

/**
 * Python: a function body (4 spaces in) that writes `reply` (JSON text) as a well-formed reply on the channel its
 * own process holds — framed by its length on a socket (the warm zygote's call), raw on the result pipe (the cold
 * path's fd 3) — and exits before hone's call writes the real one.
 */
export const pyFramedForger = (reply: string) =>
  [
    "    import os, stat",
    `    body = ${JSON.stringify(reply)}.encode()`,
    "    for fd in range(3, 64):",
    "        try:",
    "            mode = os.fstat(fd).st_mode",
    "            if stat.S_ISSOCK(mode):",
    "                os.write(fd, b'%d\\n' % len(body) + body)",
    "            elif stat.S_ISFIFO(mode) and fd == 3:",
    "                os.write(fd, body)",
    "        except OSError:",
    "            pass",
    "    os._exit(0)",
  ].join("\n");
