import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { HoneError } from "../errors.ts";

export const PYTHON_DIR = join(dirname(fileURLToPath(import.meta.url)), "python");
export const COMPAT_DIR = join(PYTHON_DIR, "compat");

const interpreters = new Map<string, string>();

/**
 * The real interpreter behind a `python` setting (pyenv shims and the like resolve to a path), so sandboxed
 * processes that see no PATH or HOME still start the same Python with the same packages.
 */
export function resolvePython(python: string): string {
  const known = interpreters.get(python);
  if (known) return known;
  let path: string;
  try {
    path = execFileSync(python, ["-c", "import sys; print(sys.executable)"], { encoding: "utf8", timeout: 30_000 }).trim();
  } catch {
    throw new HoneError(
      "badTask",
      `cannot start the task's Python interpreter "${python}"; install python3 (with numpy for the built-in tasks) or set python: in hone.yaml`,
    );
  }
  interpreters.set(python, path);
  return path;
}

export interface IsolationSupport {
  bwrap: boolean;
  /** What evaluated programs can still do when bubblewrap is not available. */
  gaps: string[];
  reason?: string;
}

let support: IsolationSupport | undefined;

/** Whether bubblewrap can build the program sandbox here (checked once per process). */
export function isolationSupport(): IsolationSupport {
  if (support) return support;
  if (process.env.HONE_NO_BWRAP === "1") {
    support = {
      bwrap: false,
      reason: "HONE_NO_BWRAP=1",
      gaps: ["network access", "writes outside the scratch directory", "reading the task folder"],
    };
    return support;
  }
  try {
    execFileSync(
      "bwrap",
      [
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "true",
      ],
      { stdio: "pipe", timeout: 10_000 },
    );
    support = { bwrap: true, gaps: [] };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    const reason =
      e.code === "ENOENT"
        ? "bubblewrap (bwrap) is not installed"
        : `bwrap cannot create its namespaces here: ${
            String(e.stderr ?? e.message)
              .trim()
              .split("\n")[0]
          }`;
    support = {
      bwrap: false,
      reason,
      gaps: ["network access", "writes outside the scratch directory", "reading the task folder"],
    };
  }
  return support;
}

/** One line for the user, once per run, saying plainly what is not isolated. */
export function isolationNotice(): string | undefined {
  const s = isolationSupport();
  if (s.bwrap) return undefined;
  return `note: evaluated programs are not fully isolated (${s.reason}): they run in their own process with no secrets in their environment, but are not prevented from ${s.gaps.join(", ")}. Install bubblewrap to close this.`;
}
