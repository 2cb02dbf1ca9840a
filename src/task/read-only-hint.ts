import { relative } from "node:path";
import type { DiscoveryTask } from "./discovery-task.ts";

/**
 * What to tell someone whose evaluator raised EROFS (`[Errno 30] Read-only file system: '<path>'`): in its sandbox
 * hone mounts the task folder (and python_path, evaluator_read_only) read-only, so that every evaluation sees it as
 * it was; an upstream evaluator that writes beside its own file (a build folder, a log, a cache) fails there. Says
 * which folder it wrote into, where it may write, and what the user can do; undefined for any other error.
 */
export function readOnlyHint(task: DiscoveryTask, error: string): string | undefined {
  const m = /\[Errno 30\] Read-only file system: '([^']*)'/.exec(error);
  if (!m) return undefined;
  const path = m[1] as string;
  const inside = (dir: string) => !relative(dir, path).startsWith("..");
  const mounted = inside(task.dir)
    ? "that is in the task folder, which hone mounts read-only for the evaluator so that every evaluation sees it unchanged"
    : [...task.pythonPath, ...(task.evaluatorReadOnly ?? [])].some(inside)
      ? "that is in a folder hone.yaml's python_path or evaluator_read_only gives the evaluator read-only"
      : "the evaluator's sandbox may not write there";
  return `${mounted}. An evaluator may write only in its working directory, the evaluation's own scratch folder ($TMPDIR and $HOME point there too), removed after each evaluation: make it write there, with os.getcwd() or tempfile.mkdtemp(), instead of beside its own file`;
}
