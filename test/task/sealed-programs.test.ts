import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import {
  PY_DAEMON,
  PY_FD_FORGER,
  PY_FORGER,
  PY_HEAVY_DAEMON,
  pyFramedForger,
  SURVIVOR_MARK,
  survivors,
} from "../helpers/attacks.ts";
import { makeTask, ROOT, tempDir } from "../helpers/fixtures.ts";
import { withPool } from "../helpers/pool.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";

// Programs written to cheat, sabotage or escape, run through the warm pool and the cold path alike. Each test
// states the exact outcome: the value the program really returns (or a refusal), the host untouched, nothing left
// running, later evaluations unaffected. These need bubblewrap and user namespaces (CI installs bubblewrap).

/** A task whose evaluator runs the program contained and reports what its run() returned as `seen`. */
function probeTask(runTimeout = 20): DiscoveryTask {
  return loadTaskFolder(
    makeTask(
      `import json\nfrom hone_runtime import run_program, ProgramError\nSTATE = {'secret': 'evaluator-only'}\ndef evaluate(program_path):\n    try:\n        out = run_program(program_path, 'run', timeout=${runTimeout})\n    except ProgramError as e:\n        return {'combined_score': 0.0, 'validity': 0.0, 'error': str(e)}\n    return {'combined_score': 1.0, 'validity': 1.0, 'seen': json.dumps(out)}\n`,
      { timeout: runTimeout + 10 },
    ),
  );
}
/** A task whose evaluator makes three calls with run_program_many and reports their values as `seen`. */
function probeManyTask(): DiscoveryTask {
  return loadTaskFolder(
    makeTask(
      `import json\nfrom hone_runtime import run_program_many, ProgramError\ndef evaluate(program_path):\n    try:\n        out = run_program_many(program_path, 'run', [(), (), ()], timeout=20)\n    except ProgramError as e:\n        return {'combined_score': 0.0, 'validity': 0.0, 'error': str(e)}\n    return {'combined_score': 1.0, 'validity': 1.0, 'seen': json.dumps([r.get('value') for r in out])}\n`,
      { timeout: 30 },
    ),
  );
}
const program = (body: string, prelude = "") =>
  `${prelude}\n# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\ndef run():\n${body}\n`;
const seen = (e: Evaluation) => JSON.parse(String(e.metrics.seen));
const BENIGN = program("    return 'benign'");

type Mode = "warm" | "cold";
const MODES: Mode[] = ["warm", "cold"];

describe("sealed evaluation: programs cannot forge, escape or outlive their call", () => {
  beforeEach((ctx) => requireTool(ctx, "bubblewrap", sealedMissing()));
  let task: DiscoveryTask;
  let manyTask: DiscoveryTask;
  let pool: EvaluatorPool;
  let manyPool: EvaluatorPool;
  const warm = (t: DiscoveryTask) => (t === task ? pool : t === manyTask ? manyPool : undefined);
  const evaluate = (mode: Mode, p: string, t = task) =>
    mode === "warm" && warm(t) ? (warm(t) as EvaluatorPool).evaluate(p) : evaluateProgram(t, p);

  beforeAll(async () => {
    if (sealedMissing()) return;
    task = probeTask();
    manyTask = probeManyTask();
    [pool, manyPool] = await Promise.all([EvaluatorPool.start(task, { size: 2 }), EvaluatorPool.start(manyTask, { size: 1 })]);
  });
  afterAll(() => {
    pool?.close();
    manyPool?.close();
  });

  it.each(MODES)("[%s] a forging daemon and forged files change nothing, now or later", async (mode) => {
    const attack = await evaluate(mode, program("    return 'forger'", PY_FORGER));
    expect(attack).toMatchObject({ valid: true, score: 1 });
    expect(seen(attack)).toBe("forger");
    expect(survivors()).toEqual([]);
    const later = await evaluate(mode, BENIGN);
    expect(later).toMatchObject({ valid: true, score: 1 });
    expect(seen(later)).toBe("benign");
  });

  it.each(MODES)("[%s] a forged reply written into its own descriptors leaves it unscored", async (mode) => {
    const e = await evaluate(mode, program("    return 1", PY_FD_FORGER));
    expect(e.valid).toBe(false);
    expect(e.score).toBeUndefined();
    expect(e.reason).toMatch(/ended without a result/);
  });

  // A reply framed as hone's call frames it, written by the program on the channel its own process holds: only a
  // reply exactly of the call's shape is read, so a forger gains nothing a program returning values could not.
  const FORGED_REPLIES: [string, string, string][] = [
    ["one result where three calls were made", "many", JSON.stringify({ ok: true, value: [{ ok: true, value: 9 }] })],
    [
      "four results where three calls were made",
      "many",
      JSON.stringify({ ok: true, value: Array(4).fill({ ok: true, value: 9 }) }),
    ],
    ["a result that is not a call's", "many", JSON.stringify({ ok: true, value: [1, 2, 3] })],
    [
      "a result with a field of its own",
      "many",
      JSON.stringify({ ok: true, value: Array(3).fill({ ok: true, value: 9, score: 1 }) }),
    ],
    ["a bare NaN", "one", '{"ok": true, "value": [NaN, Infinity, 1.0]}'],
    ["a reply with a field of its own", "one", JSON.stringify({ ok: true, value: 1, metrics: { combined_score: 1e9 } })],
  ];
  it.each(MODES.flatMap((m) => FORGED_REPLIES.map(([what, kind, reply]) => [m, what, kind, reply])))(
    "[%s] a well-framed forged reply holding %s leaves it unscored",
    async (mode, _what, kind, reply) => {
      const t = kind === "many" ? manyTask : task;
      const e = await evaluate(mode as Mode, program(pyFramedForger(reply)), t);
      expect(e.valid).toBe(false);
      expect(e.reason).toMatch(/a reply that hone's call never writes/);
    },
  );

  it.each(MODES)("[%s] the same calls made honestly are scored, one result per call", async (mode) => {
    const e = await evaluate(mode, program("    return 9"), manyTask);
    expect(e).toMatchObject({ valid: true, score: 1 });
    expect(seen(e)).toEqual([9, 9, 9]);
  });

  it.each(MODES)("[%s] cannot write a host file, directly, through a symlink or through /proc", async (mode) => {
    const victim = join(tempDir(), "victim.txt");
    writeFileSync(victim, "intact");
    const body = [
      "    import os",
      "    done = []",
      `    for how, path in (('direct', ${JSON.stringify(victim)}), ('proc', '/proc/1/root' + ${JSON.stringify(victim)})):`,
      "        try:",
      "            open(path, 'w').write('pwned'); done.append(how)",
      "        except OSError:",
      "            pass",
      "    try:",
      `        os.symlink(${JSON.stringify(victim)}, 'link'); open('link', 'w').write('pwned'); done.append('symlink')`,
      "    except OSError:",
      "        pass",
      "    return done",
    ].join("\n");
    expect(seen(await evaluate(mode, program(body)))).toEqual([]);
    expect(readFileSync(victim, "utf8")).toBe("intact");
  });

  it.each(MODES)("[%s] cannot read secrets: /etc/shadow, home, caches, other checkouts, /var/tmp, /run", async (mode) => {
    const secretDir = join(homedir(), ".cache", `hone-sealed-test-${process.pid}`);
    mkdirSync(secretDir, { recursive: true });
    writeFileSync(join(secretDir, "requests.db"), "recorded responses");
    const homeSecret = join(homedir(), `.hone-sealed-secret-${process.pid}`);
    writeFileSync(homeSecret, "token");
    try {
      const files = ["/etc/shadow", "/etc/passwd", join(secretDir, "requests.db"), homeSecret, join(ROOT, "package.json")];
      // Folders whose host content must not show (/run holds at most hone's own empty mount point).
      const folders = ["/var/tmp", "/var", "/home", "/root/.ssh", "/run/user", "/run/hone", "/etc/ssh"];
      const body = [
        "    import os",
        "    out = []",
        `    for p in ${JSON.stringify(files)}:`,
        "        try:",
        "            open(p).read(1); out.append(p)",
        "        except OSError:",
        "            pass",
        `    for p in ${JSON.stringify(folders)}:`,
        "        try:",
        "            if os.listdir(p): out.append(p)",
        "        except OSError:",
        "            pass",
        "    try:",
        "        out += ['/run/' + n for n in os.listdir('/run') if n != 'hone']",
        "    except OSError:",
        "        pass",
        "    return out",
      ].join("\n");
      expect(seen(await evaluate(mode, program(body)))).toEqual([]);
    } finally {
      rmSync(secretDir, { recursive: true, force: true });
      rmSync(homeSecret, { force: true });
    }
  });

  describe("sockets", () => {
    const servers: Server[] = [];
    let hits = 0;
    const unixPath = `/var/tmp/hone-sealed-${process.pid}.sock`;
    const abstract = `\0hone-sealed-${process.pid}`;
    let port = 0;
    beforeAll(async () => {
      const listen = (target: string | number) =>
        new Promise<Server>((resolve) => {
          const s = createServer((c) => {
            hits++;
            c.end("secret");
          });
          const done = () => resolve(s);
          typeof target === "number" ? s.listen(target, "127.0.0.1", done) : s.listen(target, done);
          servers.push(s);
        });
      rmSync(unixPath, { force: true });
      await listen(unixPath);
      await listen(abstract);
      port = ((await listen(0)).address() as { port: number }).port;
    });
    afterAll(() => {
      for (const s of servers) s.close();
      rmSync(unixPath, { force: true });
    });

    it.each(MODES)("[%s] reaches no socket: filesystem, abstract, loopback, the zygote's own", async (mode) => {
      const body = [
        "    import socket, glob",
        "    reached = []",
        `    targets = [(socket.AF_UNIX, ${JSON.stringify(unixPath)}), (socket.AF_UNIX, ${JSON.stringify(abstract)}), (socket.AF_INET, ('127.0.0.1', ${port}))]`,
        "    targets += [(socket.AF_UNIX, p) for p in glob.glob('/run/hone/*') + glob.glob('/tmp/hone-*/pool-*/sock/*')]",
        "    for family, addr in targets:",
        "        try:",
        "            s = socket.socket(family, socket.SOCK_STREAM); s.settimeout(2); s.connect(addr); reached.append(str(addr))",
        "        except OSError:",
        "            pass",
        "    return reached",
      ].join("\n");
      expect(seen(await evaluate(mode, program(body)))).toEqual([]);
      expect(hits).toBe(0);
    });
  });

  it.each(MODES)("[%s] sees no process but its own, and kills nothing outside itself", async (mode) => {
    const body = [
      "    import os, signal",
      "    try:",
      "        pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())",
      "    except OSError:",
      "        pids = []",
      "    for pid in range(1, 4096):",
      "        try:",
      "            os.kill(pid, signal.SIGKILL) if pid != os.getpid() else None",
      "        except OSError:",
      "            pass",
      "    try:",
      "        os.kill(-1, signal.SIGKILL)",
      "    except OSError:",
      "        pass",
      "    return pids",
    ].join("\n");
    // Its own PID namespace, and no /proc of anyone else's (programs get no /proc at all under bubblewrap).
    expect(seen(await evaluate(mode, program(body))).every((pid: number) => pid <= 2)).toBe(true);
    expect(await evaluate(mode, BENIGN)).toMatchObject({ valid: true, score: 1 });
  });

  it.each(MODES)("[%s] a fork bomb stops at the process limit and leaves nothing behind", async (mode) => {
    const body = [
      "    import os",
      "    n = 0",
      "    for _ in range(400):",
      "        try:",
      "            pid = os.fork()",
      "        except OSError:",
      "            break",
      "        if pid == 0:",
      `            os.execv('/bin/sleep', ['sleep', '${SURVIVOR_MARK}'])`,
      "        n += 1",
      "    return n",
    ].join("\n");
    const n = seen(await evaluate(mode, program(body)));
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(64);
    expect(survivors()).toEqual([]);
  });

  it.each(MODES)("[%s] ignoring SIGTERM with a detached child does not outlive the timeout", async (mode) => {
    const t = probeTask(2);
    const body =
      "    import signal, time\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    _hone_daemon()\n    time.sleep(300)";
    const e =
      mode === "warm"
        ? await withPool(t, (p) => p.evaluate(program(body, PY_DAEMON)))
        : await evaluateProgram(t, program(body, PY_DAEMON));
    expect(e.valid).toBe(false);
    expect(String(e.metrics.error)).toMatch(/did not return within 2 s/);
    expect(survivors()).toEqual([]);
  });

  it.each(MODES)("[%s] a timed-out program's processes are all gone before its evaluation ends", async (mode) => {
    // A daemon holding 512 MB takes the kernel tens of ms to tear down once killed: the evaluation must not end
    // before it is gone (its pid free), as it does not for a program that returns (kill_others before the reply).
    // 4 s: time for the daemon to start, and be seen, on a loaded machine.
    const t = probeTask(4);
    const seenPids = new Set<number>();
    const watch = setInterval(() => {
      for (const pid of survivors()) seenPids.add(pid);
    }, 20);
    const body = "    import time\n    _hone_heavy_daemon()\n    time.sleep(300)";
    try {
      const e =
        mode === "warm"
          ? await withPool(t, (p) => p.evaluate(program(body, PY_HEAVY_DAEMON)))
          : await evaluateProgram(t, program(body, PY_HEAVY_DAEMON));
      clearInterval(watch);
      expect(String(e.metrics.error)).toMatch(/did not return within 4 s/);
      expect(seenPids.size).toBe(1);
      expect([...seenPids].filter((pid) => existsSync(`/proc/${pid}`))).toEqual([]);
    } finally {
      clearInterval(watch);
    }
  });

  it.each(MODES)("[%s] run_program reads a program of many chunks whole, and refuses one past 4 MB or endless", async (mode) => {
    // The file is read in chunks up to the cap: one over 64 KB arrives whole; a larger one, or /dev/zero, is refused.
    const t = loadTaskFolder(
      makeTask(
        `from hone_runtime import run_program, ProgramError
def outcome(path):
    try:
        return repr(run_program(path, 'run', timeout=20))
    except ProgramError as e:
        return str(e)
def evaluate(program_path):
    big = program_path + '.big.py'
    with open(big, 'w') as f:
        f.write('#' * (4 << 20) + '\\ndef run():\\n    return 2\\n')
    return {'combined_score': 1.0, 'whole': outcome(program_path), 'big': outcome(big), 'zero': outcome('/dev/zero')}
`,
      ),
    );
    const text = program("    return len(PAD)", `PAD = ${JSON.stringify("x".repeat(200_000))}`);
    const e = mode === "warm" ? await withPool(t, (p) => p.evaluate(text)) : await evaluateProgram(t, text);
    expect(e.metrics).toMatchObject({ whole: "200000" });
    expect(e.metrics.big).toMatch(/larger than 4194304 bytes/);
    expect(e.metrics.zero).toMatch(/larger than 4194304 bytes/);
  });

  it("a program whose evaluator gave up on it is killed at once, not at its own timeout", async () => {
    // The program may run 60 s, the evaluation only 2: the evaluator is killed at 2 s, and its program with it.
    const t = loadTaskFolder(
      makeTask(
        "from hone_runtime import run_program\ndef evaluate(program_path):\n    return {'combined_score': float(run_program(program_path, 'run', timeout=60))}\n",
        { timeout: 2 },
      ),
    );
    const body = "    import time\n    _hone_daemon()\n    time.sleep(300)";
    await withPool(t, async (p) => {
      const started = performance.now();
      expect(await p.evaluate(program(body, PY_DAEMON))).toMatchObject({ valid: false, timedOut: true });
      await expect.poll(() => survivors(), { timeout: 5000 }).toEqual([]);
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(await p.evaluate(program("    return 1"))).toMatchObject({ valid: true, score: 1 });
    });
  });

  it.each(MODES)("[%s] a program that closes or shuts its own connection fails only itself", async (mode) => {
    const body = [
      "    import os, socket",
      "    for fd in range(3, 64):",
      "        try:",
      "            socket.socket(fileno=os.dup(fd)).shutdown(socket.SHUT_RDWR)",
      "        except OSError:",
      "            pass",
      "        try:",
      "            os.close(fd)",
      "        except OSError:",
      "            pass",
      "    return 'closed'",
    ].join("\n");
    // Its own result is lost or, where its descriptors were renumbered onto the result's, still its own.
    const e = await evaluate(mode, program(body));
    expect(e.valid ? seen(e) : String(e.metrics.error)).toMatch(/^closed$|ended without a result/);
    expect(await evaluate(mode, BENIGN)).toMatchObject({ valid: true, score: 1 });
  });

  it.each(MODES)("[%s] files and shared memory it leaves are gone for the next program", async (mode) => {
    const write = [
      "    import ctypes, os",
      "    open('/tmp/baton', 'w').write('x'); open('/dev/shm/baton', 'w').write('x')",
      "    libc = ctypes.CDLL(None, use_errno=True)",
      "    return libc.shmget(0x5eed, 4096, 0o1666)",
    ].join("\n");
    const read = [
      "    import ctypes, os",
      "    libc = ctypes.CDLL(None, use_errno=True)",
      "    return [os.path.exists('/tmp/baton'), os.path.exists('/dev/shm/baton'), libc.shmget(0x5eed, 0, 0o666) >= 0]",
    ].join("\n");
    expect(seen(await evaluate(mode, program(write)))).toBeGreaterThanOrEqual(0);
    expect(seen(await evaluate(mode, program(read)))).toEqual([false, false, false]);
  });

  it.each(MODES)("[%s] cannot peel off its sandbox: unmount, new namespaces, setuid, raised limits", async (mode) => {
    const body = [
      "    import ctypes, os, resource",
      "    libc = ctypes.CDLL(None, use_errno=True)",
      "    got = []",
      "    if libc.umount2(b'/run/hone', 2) == 0: got.append('umount')",
      "    if libc.unshare(0x10020000) == 0:",
      "        if libc.umount2(b'/run/hone', 2) == 0 or os.path.exists('/run/hone/zygote.sock'): got.append('revealed')",
      "    try:",
      "        os.setuid(0); got.append('setuid')",
      "    except OSError:",
      "        pass",
      "    try:",
      "        resource.setrlimit(resource.RLIMIT_NPROC, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)); got.append('rlimit')",
      "    except (OSError, ValueError):",
      "        pass",
      "    return got",
    ].join("\n");
    expect(seen(await evaluate(mode, program(body)))).toEqual([]);
  });

  it.each(MODES)("[%s] cannot change the Python the next program imports", async (mode) => {
    const body = `    import json, os\n    try:\n        open(json.__file__, 'a').write('\\nraise SystemExit')\n        return 'wrote'\n    except OSError:\n        return 'refused'`;
    expect(seen(await evaluate(mode, program(body)))).toBe("refused");
    expect(seen(await evaluate(mode, program("    import json\n    return json.dumps([1])")))).toBe("[1]");
  });

  it.each(MODES)("[%s] memory, disk and output bombs fail only themselves", async (mode) => {
    const memory = await evaluate(mode, program("    x = bytearray(1 << 34)\n    return len(x)"));
    expect(memory.valid).toBe(false);
    expect(String(memory.metrics.error)).toMatch(/out of memory/);
    const disk =
      "    n = 0\n    try:\n        with open('/tmp/fill', 'wb') as f:\n            for _ in range(2048):\n                f.write(b'x' * (1 << 20)); n += 1\n    except OSError:\n        pass\n    return n";
    expect(seen(await evaluate(mode, program(disk)))).toBeLessThanOrEqual(256);
    const output = await evaluate(mode, program("    return 'x' * (100 << 20)"));
    expect(output.valid).toBe(false);
    expect(String(output.metrics.error)).toMatch(/larger than the output cap|too large/);
    const deep = await evaluate(mode, program("    v = []\n    for _ in range(100000):\n        v = [v]\n    return v"));
    expect(deep.valid).toBe(false);
    expect(await evaluate(mode, BENIGN)).toMatchObject({ valid: true, score: 1 });
  });

  it.each(MODES)("[%s] cannot see the task folder or the evaluator's source", async (mode) => {
    const body = `    import os\n    try:\n        return open(${JSON.stringify(task.evaluatorPath)}).read()[:20]\n    except OSError:\n        return 'hidden'`;
    expect(seen(await evaluate(mode, program(body)))).toBe("hidden");
  });

  it.each(MODES)("[%s] an unseeded program draws other numbers in each call, as a fresh interpreter does", async (mode) => {
    const body = "    import random\n    import numpy as np\n    return [float(np.random.rand()), random.random()]";
    const [a, b] = [seen(await evaluate(mode, program(body))), seen(await evaluate(mode, program(body)))];
    expect(a[0]).not.toBe(b[0]);
    expect(a[1]).not.toBe(b[1]);
  });

  it("two programs evaluated at once cannot see each other", async () => {
    const writer = program("    import time\n    open('/tmp/secret-of-a', 'w').write('a')\n    time.sleep(2)\n    return 'a'");
    const reader = program(
      "    import glob, time\n    time.sleep(0.5)\n    return glob.glob('/tmp/**/secret-of-a', recursive=True) + glob.glob('/proc/*/root/tmp/secret-of-a')",
    );
    const [a, b] = await Promise.all([pool.evaluate(writer), pool.evaluate(reader)]);
    expect(seen(a)).toBe("a");
    expect(seen(b)).toEqual([]);
  });

  it("the host's event loop stays responsive while programs attack", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 50);
    try {
      await pool.evaluate(program("    import time\n    _hone_daemon()\n    time.sleep(1.5)\n    return 1", PY_DAEMON));
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(5);
  });
});
