import {
  chmodSync,
  closeSync,
  existsSync,
  fchmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { readdir, readFile, readlink, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { HoneError } from "../errors.ts";
import { removePartials } from "./atomic.ts";
import { commitContent, parseCommit, parseTree, readObject, type TreeEntry, treeContent, writeObject } from "./git-objects.ts";
import { gitSync, isOid, readRegular } from "./git-safe.ts";

/** A file as a commit holds it: its path in the package and how to write it. */
type CheckedOut = { path: string; mode: string; data: Buffer };

/** Removes every `*.lock` file under `dir` (ref locks a killed writer left), walking its folders without following links. */
function dropLocks(dir: string): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) dropLocks(path);
    else if (e.name.endsWith(".lock")) rmSync(path, { force: true });
  }
}

/** Makes `rel` a real folder under `dir`, one part at a time: a link or a file in the way is replaced. */
function folderAt(dir: string, rel: string): void {
  let at = dir;
  for (const part of rel === "." ? [] : rel.split("/")) {
    at = join(at, part);
    const st = lstatSync(at, { throwIfNoEntry: false });
    if (st?.isDirectory()) continue;
    if (st) rmSync(at, { force: true });
    mkdirSync(at);
  }
}

/** Writes a file that must not exist yet: a link put there meanwhile makes it fail, never followed. */
function writeNew(file: string, data: Buffer, mode: number): void {
  const fd = openSync(file, "wx", mode);
  try {
    writeFileSync(fd, data);
    fchmodSync(fd, mode); // exactly, whatever the umask
  } finally {
    closeSync(fd);
  }
}

/** The most of a packed-refs file read. */
const PACKED_REFS_BYTES = 256 * 1024 * 1024;

const idOrUndefined = (sha: string | undefined) => (isOid(sha) ? sha : undefined);

/**
 * A bare git repository of harness versions. Every candidate is a commit on refs/candidates/…, created once and
 * never moved; the incumbent is refs/heads/main, which moves only by fast-forward. Commits carry fixed author
 * data and dates, so the same run gives the same commit ids.
 */
export class HarnessRepo {
  constructor(readonly gitDir: string) {}

  /** git over this repository's objects only (git-safe.ts): nothing else of a run folder is read or run. */
  private git(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; raw?: boolean } = {}): string {
    return gitSync(this.gitDir, args, opts);
  }

  /** `sha` if it is a commit id, else an error naming it: ids come from a run's hone.db, as untrusted as its repository. */
  private oid(sha: string): string {
    if (isOid(sha)) return sha;
    throw new HoneError(
      "usage",
      `${this.gitDir}: ${JSON.stringify(String(sha).slice(0, 80))} is not a commit id; the run's records are damaged`,
    );
  }

  /** A new bare repository, laid out as `git init --bare --initial-branch=main` lays one out (no git process). */
  static init(gitDir: string): HarnessRepo {
    for (const d of ["objects/info", "objects/pack", "refs/heads", "refs/tags", "info"])
      mkdirSync(join(gitDir, d), { recursive: true });
    writeFileSync(join(gitDir, "config"), "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n");
    writeFileSync(join(gitDir, "description"), "Harness versions of a hone run.\n");
    writeFileSync(join(gitDir, "HEAD"), "ref: refs/heads/main\n");
    return new HarnessRepo(gitDir);
  }

  /**
   * The repository of a run, for the run's one writer: made when missing; else opened, and the `<ref>.lock` files a
   * killed writer left are removed (a ref update takes its lock exclusively, so one left behind would refuse every
   * later update of that ref, and the run could never be resumed).
   */
  static forRun(gitDir: string): HarnessRepo {
    if (!existsSync(join(gitDir, "HEAD"))) return HarnessRepo.init(gitDir);
    dropLocks(join(gitDir, "refs"));
    return new HarnessRepo(gitDir);
  }

  /**
   * Commits a package directory as it is (every file, as `git add --all --force` would); `order` fixes the commit
   * date so ids are reproducible. Objects are written in-process (git-objects.ts): no git process per candidate,
   * which is most of what a replayed run costs otherwise.
   */
  async commitDir(dir: string, message: string, parent: string | undefined, order: number): Promise<string> {
    const gitDir = this.gitDir;
    // Returns undefined for a folder with no files: git keeps no empty trees.
    const writeDir = async (path: string, top = false): Promise<string | undefined> => {
      const tree: TreeEntry[] = [];
      for (const e of await readdir(path, { withFileTypes: true })) {
        const full = join(path, e.name);
        if (e.isDirectory()) {
          if (e.name === ".git") continue;
          const oid = await writeDir(full);
          if (oid) tree.push({ mode: "40000", name: e.name, oid });
        } else if (e.isSymbolicLink()) {
          const oid = writeObject(gitDir, "blob", Buffer.from(await readlink(full)));
          tree.push({ mode: "120000", name: e.name, oid });
        } else if (e.isFile()) {
          const executable = ((await stat(full)).mode & 0o111) !== 0;
          const oid = writeObject(gitDir, "blob", await readFile(full));
          tree.push({ mode: executable ? "100755" : "100644", name: e.name, oid });
        }
      }
      return tree.length === 0 && !top ? undefined : writeObject(gitDir, "tree", treeContent(tree));
    };
    const tree = (await writeDir(dir, true)) as string;
    const who = { name: "hone", email: "hone@localhost", timestamp: 1_700_000_000 + order };
    return writeObject(gitDir, "commit", commitContent(tree, parent ? [parent] : [], who, message));
  }

  /**
   * Updates a loose ref the way git does: take `<ref>.lock` exclusively, check the current value, write, rename.
   * `expected` is the value the ref must have now (undefined: it must not exist). Returns false when it differs.
   * No git process is started, which matters when many candidates are committed per round.
   */
  private swapRef(ref: string, sha: string, expected: string | undefined): boolean {
    const path = join(this.gitDir, ref);
    mkdirSync(dirname(path), { recursive: true });
    const lock = `${path}.lock`;
    writeFileSync(lock, `${sha}\n`, { flag: "wx" });
    try {
      if (this.resolve(ref) !== expected) return false;
      renameSync(lock, path);
      return true;
    } finally {
      rmSync(lock, { force: true });
    }
  }

  /** Creates a ref that must not exist yet (or already points at the same commit, after a resume). */
  createRef(ref: string, sha: string): void {
    if (this.swapRef(ref, sha, undefined)) return;
    const existing = this.resolve(ref);
    if (existing !== sha) throw new Error(`${ref} already points at ${existing}, not ${sha}`);
  }

  /**
   * Points a ref at `sha` whatever it pointed at before: the ref of a candidate whose row is not recorded yet, which a
   * killed attempt may have left at another commit (a proposal made again without the request cache differs).
   */
  replaceRef(ref: string, sha: string): void {
    const current = this.resolve(ref);
    if (current !== sha && !this.swapRef(ref, sha, current)) throw new Error(`${ref} moved while it was replaced`);
  }

  /** Removes a ref (a candidate's that a killed attempt left, when the attempt made again has no commit). */
  dropRef(ref: string): void {
    rmSync(join(this.gitDir, ref), { force: true });
    if (this.resolve(ref)) this.unpack(ref);
  }

  /**
   * Removes a ref from packed-refs the way git does (under `packed-refs.lock`, then a rename), with the peeled line
   * that may follow it. No git process runs on the run's own repository, whose hooks it would run.
   */
  private unpack(ref: string): void {
    const path = join(this.gitDir, "packed-refs");
    const lines = (readRegular(path, PACKED_REFS_BYTES)?.toString("utf8") ?? "").split("\n");
    const kept: string[] = [];
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]?.split(" ")[1] !== ref) kept.push(lines[i] as string);
      else if (lines[i + 1]?.startsWith("^")) i++;
    }
    const lock = `${path}.lock`;
    writeFileSync(lock, kept.join("\n"), { flag: "wx" });
    try {
      renameSync(lock, path);
    } finally {
      rmSync(lock, { force: true });
    }
  }

  /**
   * The commit a ref points at, or undefined. Full ref names are read from the repository's files (loose, then
   * packed), a ref that is not a regular file or holds no commit id read as missing. Other names (`main`, `r01-k0`,
   * an abbreviated id, given on the command line) are looked up the same way under refs/, or as an id by git.
   */
  resolve(ref: string): string | undefined {
    if (ref.startsWith("refs/")) {
      if (ref.split("/").some((p) => p === "" || p === "." || p === "..")) return undefined;
      const loose = readRegular(join(this.gitDir, ref), 4096);
      if (loose !== undefined) return idOrUndefined(loose.toString("utf8").trim());
      const packed = readRegular(join(this.gitDir, "packed-refs"), PACKED_REFS_BYTES);
      for (const line of packed?.toString("utf8").split("\n") ?? []) {
        const [sha, name] = line.split(" ");
        if (name === ref) return idOrUndefined(sha);
      }
      return undefined;
    }
    if (/^[0-9a-f]{4,64}$/.test(ref)) {
      try {
        const sha = idOrUndefined(this.git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]));
        if (sha) return sha;
      } catch {
        // not an id here: perhaps a ref's name
      }
    }
    const names = ref === "HEAD" ? ["heads/main"] : [ref, `tags/${ref}`, `heads/${ref}`, `candidates/${ref}`];
    for (const name of names) {
      const sha = this.resolve(`refs/${name}`);
      if (sha) return sha;
    }
    return undefined;
  }

  /** Whether commit `a` is `b` or one of its ancestors (false when either is no commit id, or not here). */
  isAncestor(a: string, b: string): boolean {
    if (!isOid(a) || !isOid(b)) return false;
    let walked: boolean | undefined;
    try {
      walked = this.ancestorWalk(a, b);
    } catch {
      return false; // a corrupt object, or one that is no regular file: no lineage through it
    }
    if (walked !== undefined) return walked;
    try {
      this.git(["merge-base", "--is-ancestor", a, b]);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Moves main to `sha` only if that is a fast-forward; returns false (and moves nothing) otherwise. `from`, when
   * given, is the commit main must point at now (the new commit's parent): one compare-and-swap update suffices.
   */
  fastForwardMain(sha: string, from?: string): boolean {
    const current = this.resolve("refs/heads/main");
    if (current === sha) return true;
    // Already contained in main (a resumed run re-applying an earlier decision): nothing to move.
    if (current && current !== from && this.isAncestor(sha, current)) return true;
    // With `from` (the new commit's parent) equal to main, the move is a fast-forward by construction.
    if (current && current !== from && !this.isAncestor(current, sha)) return false;
    return this.swapRef("refs/heads/main", sha, current);
  }

  /** The diff between two commits (plain text: hone's own config, no external diff or textconv driver). */
  diff(a: string, b: string): string {
    return this.git(["diff", "--no-color", "--no-ext-diff", "--no-textconv", this.oid(a), this.oid(b), "--"]);
  }

  files(sha: string): string[] {
    return this.git(["ls-tree", "-r", "-z", "--name-only", this.oid(sha)], { raw: true })
      .split("\0")
      .filter(Boolean);
  }

  /** One file of a commit, its bytes as text (its own leading and trailing white space kept). */
  show(sha: string, path: string): string {
    return this.git(["cat-file", "blob", `${this.oid(sha)}:${path}`], { raw: true });
  }

  /** Whether `a` is `b` or one of its ancestors, read from loose objects; undefined when one is not loose. */
  private ancestorWalk(a: string, b: string): boolean | undefined {
    const seen = new Set<string>();
    for (const todo = [b]; todo.length > 0; ) {
      const oid = todo.pop() as string;
      if (oid === a) return true;
      if (seen.has(oid)) continue;
      seen.add(oid);
      const commit = readObject(this.gitDir, oid);
      if (commit?.type !== "commit") return undefined;
      todo.push(...parseCommit(commit.content).parents);
    }
    return false;
  }

  /**
   * The files of a commit, read from loose objects; undefined when something is not a loose object here, or the
   * commit holds a symbolic link or a name twice (git checks those out itself: it never writes through a link).
   */
  private checkout(sha: string): CheckedOut[] | undefined {
    const commit = readObject(this.gitDir, sha);
    if (commit?.type !== "commit") return undefined;
    const out: CheckedOut[] = [];
    const walk = (tree: string, prefix: string): boolean => {
      const t = readObject(this.gitDir, tree);
      if (t?.type !== "tree") return false;
      const entries = parseTree(t.content);
      if (new Set(entries.map((e) => e.name)).size !== entries.length) return false;
      for (const e of entries) {
        if (!e.name || e.name === "." || e.name === ".." || e.name.includes("/") || e.name === ".git")
          throw new Error(`${this.gitDir}: commit ${sha} names a file ${JSON.stringify(e.name)} that no package holds`);
        const path = prefix ? `${prefix}/${e.name}` : e.name;
        if (e.mode === "40000") {
          if (!walk(e.oid, path)) return false;
          continue;
        }
        const blob = readObject(this.gitDir, e.oid);
        if (blob?.type !== "blob" || !["100644", "100755"].includes(e.mode)) return false;
        out.push({ path, mode: e.mode, data: blob.content });
      }
      return true;
    };
    return walk(parseCommit(commit.content).tree, "") ? out : undefined;
  }

  /**
   * Writes the files of a commit as the folder `dir`, all at once: checked out into a folder beside it, then renamed
   * into place (whatever stood at `dir` is replaced). A kill never leaves half a version where a resumed run would
   * take a folder holding `agent.yaml` for a whole one.
   */
  materialize(sha: string, dir: string): void {
    this.oid(sha);
    mkdirSync(dirname(dir), { recursive: true });
    const prefix = `.${basename(dir)}.partial-`;
    removePartials(dirname(dir), prefix); // what a killed checkout left beside (one writer per run)
    const staging = mkdtempSync(join(dirname(dir), prefix));
    try {
      chmodSync(staging, 0o755);
      this.checkoutInto(sha, staging);
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
    } catch (err) {
      rmSync(staging, { recursive: true, force: true });
      throw err;
    }
  }

  /** Writes the files of a commit into the folder `dir`, as git's checkout-index does. */
  private checkoutInto(sha: string, dir: string): void {
    const files = this.checkout(sha);
    if (files) {
      for (const f of files) {
        const file = join(dir, f.path);
        folderAt(dir, dirname(f.path));
        // Whatever is there is replaced, as git's checkout does: a link (never written through, never followed) or a
        // folder with all it holds.
        rmSync(file, { recursive: true, force: true });
        writeNew(file, f.data, f.mode === "100755" ? 0o755 : 0o644);
      }
      return;
    }
    // Not all loose (a repository git has packed): git itself checks it out, run as git-safe.ts runs it (hone's own
    // config: no filter driver a run's repository names runs).
    const index = join(mkdtempSync(join(tmpdir(), "hone-index-")), "index");
    try {
      const env = { GIT_INDEX_FILE: index, GIT_WORK_TREE: dir };
      this.git(["read-tree", sha], { env });
      this.git(["checkout-index", "--all", "--force"], { env, cwd: dir });
    } finally {
      rmSync(join(index, ".."), { recursive: true, force: true });
    }
  }
}
