import { createServer } from "node:net";
import { join } from "node:path";
import { isolationSupport, PYTHON_DIR, pythonInfo } from "./python-env.ts";
import { type ProcessResult, runProcess } from "./python-process.ts";
import { bwrapArgs } from "./sandbox-layout.ts";

/** Where a model proxy's socket folder appears inside a sealed command's sandbox. */
const MODEL_DIR_INSIDE = "/run/hone-model";

export interface SealedCommand {
  /** The program and its arguments (the first word is looked up on PATH inside the sandbox). */
  argv: string[];
  /** Host folders the command may read (its own folder, say). */
  readOnly: string[];
  /** Host folders the command may write (its work folder). */
  writable: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** A folder holding the model proxy's `model.sock`: the command's only way out, as OPENAI_BASE_URL. */
  modelSocketDir?: string;
  /** The loopback port the forwarder listens on (see modelBaseUrl). */
  modelPort?: number;
  /** Written to the command's stdin. */
  input?: string;
  python?: string;
}

/** In a sandbox of its own the forwarder's port is always free; on the host a free one is found. */
export async function modelPort(): Promise<number> {
  if (isolationSupport().bwrap) return 8080;
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export const modelBaseUrl = (port: number) => `http://127.0.0.1:${port}/v1`;

/**
 * Runs a program hone does not trust (a harness or a method given as a program) sealed: under bubblewrap with a
 * root of only the system's libraries, the interpreter and the named folders; its own PID, IPC and network
 * namespaces, so its only way out is the model proxy's socket (reached as OPENAI_BASE_URL through a loopback
 * forwarder); an environment holding only what is named; a time limit that kills its whole process group.
 * Without bubblewrap it runs as a plain process with that environment and limit (the run's notice says so).
 */
export function runSealed(cmd: SealedCommand): Promise<ProcessResult> {
  const python = pythonInfo(cmd.python ?? "python3");
  const path = ["/usr/local/bin", "/usr/bin", "/bin", join(python.executable, "..")].join(":");
  const env: Record<string, string> = {
    PATH: path,
    LANG: process.env.LANG ?? "C.UTF-8",
    HOME: cmd.cwd,
    TMPDIR: cmd.cwd,
    // Without bubblewrap the program's own folder is writable: no __pycache__ left there to change its content hash.
    PYTHONDONTWRITEBYTECODE: "1",
    ...cmd.env,
  };
  const inside = cmd.modelSocketDir && isolationSupport().bwrap ? MODEL_DIR_INSIDE : cmd.modelSocketDir;
  const argv = inside
    ? [
        python.executable,
        join(PYTHON_DIR, "hone_forwarder.py"),
        `127.0.0.1:${cmd.modelPort ?? 0}`,
        join(inside, "model.sock"),
        "--",
        ...cmd.argv,
      ]
    : cmd.argv;
  const io = { timeoutMs: cmd.timeoutMs, input: cmd.input };
  // Without bubblewrap (whose --die-with-parent ends the sandbox with hone) its lifeline does: killed at once.
  if (!isolationSupport().bwrap)
    return runProcess(argv[0] as string, argv.slice(1), { cwd: cmd.cwd, env, ...io, lifeline: { graceSec: 0 } });
  const binds: [string, string, boolean][] = cmd.writable.map((p) => [p, p, true]);
  if (cmd.modelSocketDir) binds.push([cmd.modelSocketDir, MODEL_DIR_INSIDE, false]);
  const args = bwrapArgs({ python, readOnly: [PYTHON_DIR, ...cmd.readOnly], binds, env, cwd: cmd.cwd }, argv);
  return runProcess("bwrap", args, { cwd: cmd.cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, ...io });
}
