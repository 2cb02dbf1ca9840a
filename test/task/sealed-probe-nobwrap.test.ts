// Without bubblewrap (HONE_NO_BWRAP=1, read once per process) a program's own network namespace holds no filesystem
// socket, but connect() needs only write permission on the socket file, which the call's read-only root does not take
// away: a program reaches every Unix socket its user can (a Docker or D-Bus socket, a listener in /var/tmp). The note
// hone prints must say so, as it says what else is not enforced there.
process.env.HONE_NO_BWRAP = "1";

import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { isolationNotice, isolationSupport } from "../../src/task/python-env.ts";
import { makeTask } from "../helpers/fixtures.ts";

const EVALUATOR = `import json
from hone_runtime import run_program, ProgramError
def evaluate(program_path):
    try:
        out = run_program(program_path, 'run', timeout=20)
    except ProgramError as e:
        return {'combined_score': 0.0, 'validity': 0.0, 'error': str(e)}
    return {'combined_score': 1.0, 'validity': 1.0, 'seen': json.dumps(out)}
`;

describe("without bubblewrap, the note names the Unix sockets a program can reach", () => {
  const path = `/var/tmp/hone-sealed-probe-${process.pid}.sock`;
  let server: Server;
  let hits = 0;
  beforeAll(async () => {
    rmSync(path, { force: true });
    server = createServer((c) => {
      hits++;
      c.end("host secret");
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
  });
  afterAll(() => {
    server?.close();
    rmSync(path, { force: true });
  });

  const program = `def run():
    import socket
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(${JSON.stringify(path)})
        return s.recv(100).decode()
    except OSError as e:
        return 'refused: %s' % e
`;

  it("is really the fallback", () => expect(isolationSupport().bwrap).toBe(false));

  it.each(["warm", "cold"])("[%s] a program that reaches a host socket is a gap the note states", async (mode) => {
    const task = loadTaskFolder(makeTask(EVALUATOR));
    let e: Awaited<ReturnType<typeof evaluateProgram>>;
    if (mode === "warm") {
      const pool = await EvaluatorPool.start(task, { size: 1 });
      try {
        e = await pool.evaluate(program);
      } finally {
        pool.close();
      }
    } else e = await evaluateProgram(task, program);
    expect(e).toMatchObject({ valid: true, score: 1 });
    const reached = JSON.parse(String(e.metrics.seen)) === "host secret";
    expect(reached).toBe(hits > 0);
    if (reached) expect(isolationNotice()).toMatch(/connecting to Unix sockets on the filesystem that your user can reach/);
  });

  it("states the gap wherever the program's own namespaces are all that contain it", () => {
    const s = isolationSupport();
    expect(s.gaps.join("; ")).toMatch(/Unix sockets|network access/);
  });
});

// A task folder reached through a symbolic link: the call hid the link's path by binding a file over the folder it
// leads to, which the kernel refuses, so every call failed its set-up: the cold path answered "returned no result"
// for every program (the seed included), the warm pool waited for a call until the evaluator's timeout (30 s).
describe("without bubblewrap, a task folder reached through a symbolic link", () => {
  let top: string;
  let link: string;
  beforeAll(() => {
    // Outside /tmp, which each call replaces with its own: the folder stays where only hiding it keeps it from view.
    top = mkdtempSync("/var/tmp/hone-sealed-probe-");
    cpSync(makeTask(EVALUATOR), join(top, "real"), { recursive: true });
    link = join(top, "link");
    symlinkSync(join(top, "real"), link);
  });
  afterAll(() => rmSync(top, { recursive: true, force: true }));

  const reader = (dir: string) => `def run():
    out = []
    for p in (${JSON.stringify(join(dir, "real", "evaluator.py"))}, ${JSON.stringify(join(dir, "link", "evaluator.py"))}):
        try:
            open(p).read(1)
            out.append(p)
        except OSError:
            pass
    return out
`;

  it.each(["warm", "cold"])("[%s] scores the program, which reads the evaluator by neither name", async (mode) => {
    const task = loadTaskFolder(link);
    let e: Awaited<ReturnType<typeof evaluateProgram>>;
    if (mode === "warm") {
      const pool = await EvaluatorPool.start(task, { size: 1 });
      try {
        e = await pool.evaluate(reader(top), { timeoutSec: 15 });
      } finally {
        pool.close();
      }
    } else e = await evaluateProgram(task, reader(top));
    expect(e.metrics.error).toBeUndefined();
    expect(e).toMatchObject({ valid: true, score: 1 });
    expect(JSON.parse(String(e.metrics.seen))).toEqual([]);
  });
});
