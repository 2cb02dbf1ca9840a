import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A bare git repository of harness versions. Every candidate is a commit on refs/candidates/…, created once and
 * never moved; the incumbent is refs/heads/main, which moves only by fast-forward. Commits carry fixed author
 * data and dates, so the same run gives the same commit ids.
 */
export class HarnessRepo {
  constructor(readonly gitDir: string) {}

  private git(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): string {
    return execFileSync("git", ["--git-dir", this.gitDir, ...args], {
      encoding: "utf8",
      input: opts.input,
      cwd: opts.cwd,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH,
        HOME: this.gitDir,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_AUTHOR_NAME: "hone",
        GIT_AUTHOR_EMAIL: "hone@localhost",
        GIT_COMMITTER_NAME: "hone",
        GIT_COMMITTER_EMAIL: "hone@localhost",
        ...opts.env,
      },
      maxBuffer: 64 * 1024 * 1024,
    }).trim();
  }

  static init(gitDir: string): HarnessRepo {
    mkdirSync(gitDir, { recursive: true });
    const repo = new HarnessRepo(gitDir);
    repo.git(["init", "--bare", "--quiet", "--initial-branch=main"]);
    return repo;
  }

  /** Commits a package directory as it is; `order` fixes the commit date so ids are reproducible. */
  commitDir(dir: string, message: string, parent: string | undefined, order: number): string {
    const index = join(mkdtempSync(join(tmpdir(), "hone-index-")), "index");
    try {
      const env = { GIT_INDEX_FILE: index, GIT_WORK_TREE: dir };
      this.git(["add", "--all", "--force", "."], { env, cwd: dir });
      const tree = this.git(["write-tree"], { env });
      const date = `${1_700_000_000 + order} +0000`;
      return this.git(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", message], {
        env: { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      });
    } finally {
      rmSync(join(index, ".."), { recursive: true, force: true });
    }
  }

  /** Creates a ref that must not exist yet (or already points at the same commit, after a resume). */
  createRef(ref: string, sha: string): void {
    const existing = this.resolve(ref);
    if (existing === sha) return;
    if (existing) throw new Error(`${ref} already points at ${existing}, not ${sha}`);
    this.git(["update-ref", ref, sha, ""]);
  }

  resolve(ref: string): string | undefined {
    try {
      return this.git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
    } catch {
      return undefined;
    }
  }

  isAncestor(a: string, b: string): boolean {
    try {
      this.git(["merge-base", "--is-ancestor", a, b]);
      return true;
    } catch {
      return false;
    }
  }

  /** Moves main to `sha` only if that is a fast-forward; returns false (and moves nothing) otherwise. */
  fastForwardMain(sha: string): boolean {
    const current = this.resolve("refs/heads/main");
    if (current === sha) return true;
    if (current && !this.isAncestor(current, sha)) return false;
    this.git(["update-ref", "refs/heads/main", sha, current ?? ""]);
    return true;
  }

  diff(a: string, b: string): string {
    return this.git(["diff", "--no-color", a, b]);
  }

  files(sha: string): string[] {
    return this.git(["ls-tree", "-r", "--name-only", sha]).split("\n").filter(Boolean);
  }

  show(sha: string, path: string): string {
    return this.git(["show", `${sha}:${path}`]);
  }

  /** Writes the files of a commit into `dir`. */
  materialize(sha: string, dir: string): void {
    mkdirSync(dir, { recursive: true });
    const index = join(mkdtempSync(join(tmpdir(), "hone-index-")), "index");
    try {
      const env = { GIT_INDEX_FILE: index, GIT_WORK_TREE: dir };
      this.git(["read-tree", sha], { env });
      this.git(["checkout-index", "--all", "--force"], { env, cwd: dir });
    } finally {
      rmSync(join(index, ".."), { recursive: true, force: true });
    }
  }

  refs(prefix = "refs/"): { ref: string; sha: string }[] {
    const out = this.git(["for-each-ref", "--format=%(refname) %(objectname)", prefix]);
    return out
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [ref, sha] = l.split(" ");
        return { ref: ref as string, sha: sha as string };
      });
  }
}
