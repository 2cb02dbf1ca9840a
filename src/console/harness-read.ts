import { type GitText, gitRead, isOid, MAX_GIT_BYTES } from "../store/git-safe.ts";

export { type GitText, isOid, MAX_GIT_BYTES };

/**
 * Reads a run's harness versions (`harnesses.git`) for the console. Commit ids come from the run's hone.db, which
 * is as untrusted as the repository: only full hexadecimal ids are passed on (an id such as `--output=<file>`
 * would be an option to git), and a commit git cannot read is an answer of null, never an error.
 */
export class HarnessReader {
  constructor(readonly gitDir: string) {}

  /** The paths of a commit's files (null: no such commit here). */
  async files(sha: string): Promise<string[] | null> {
    if (!isOid(sha)) return null;
    try {
      const { text } = await gitRead(this.gitDir, ["ls-tree", "-r", "-z", "--name-only", sha], 8 * MAX_GIT_BYTES);
      return text.split("\0").filter(Boolean);
    } catch {
      return null;
    }
  }

  /** One file of a commit as text, at most MAX_GIT_BYTES of it (null: no such file). */
  async show(sha: string, path: string): Promise<GitText | null> {
    if (!isOid(sha)) return null;
    try {
      return await gitRead(this.gitDir, ["cat-file", "blob", `${sha}:${path}`], MAX_GIT_BYTES);
    } catch {
      return null;
    }
  }

  /** The diff between two commits, at most MAX_GIT_BYTES of it (null: one of them is not here). */
  async diff(a: string, b: string): Promise<GitText | null> {
    if (!isOid(a) || !isOid(b)) return null;
    try {
      return await gitRead(this.gitDir, ["diff", "--no-color", "--no-ext-diff", "--no-textconv", a, b, "--"], MAX_GIT_BYTES);
    } catch {
      return null;
    }
  }
}
