import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { HarnessRepo } from "../../src/store/git.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A run's harnesses.git is untrusted (shared, downloaded, or swapped while the run was stopped). Every git process
// hone starts over it — a checkout of a packed version, a diff, an ancestry check, a ref removed — must run none of
// the programs its config (or a `.gitconfig` beside it) names, and must never take a recorded id as an option.
const marks = tempDir("hone-gitsafe-probe4-marks-");

/** A program that leaves a file named `name` in `marks` if anything runs it (a filter's smudge passes content on). */
function tripwire(name: string): string {
  const path = join(marks, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\necho ran > ${join(marks, name)}\ncat\n`);
  chmodSync(path, 0o755);
  return path;
}

const plainGit = (gitDir: string, args: string[]) =>
  execFileSync("git", ["--git-dir", gitDir, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: tempDir(), GIT_CONFIG_NOSYSTEM: "1" },
  }).trim();

let gitDir: string;
let first: string;
let second: string;

/** Every program a git config can name that a read, a checkout or a ref update could run. */
function hostileConfig(): string {
  const hooks = join(marks, "hooks");
  mkdirSync(hooks, { recursive: true });
  for (const h of ["reference-transaction", "post-checkout", "post-index-change", "pre-commit"])
    writeFileSync(join(hooks, h), `#!/bin/sh\necho ran > ${join(marks, `hook-${h}`)}\n`, { mode: 0o755 });
  return [
    "[core]",
    `\tfsmonitor = ${tripwire("fsmonitor")}`,
    `\thooksPath = ${hooks}`,
    `\tsshCommand = ${tripwire("ssh")}`,
    `\tpager = ${tripwire("pager")}`,
    `\teditor = ${tripwire("editor")}`,
    `\tattributesFile = ${join(marks, "attributes")}`,
    "[diff]",
    `\texternal = ${tripwire("external")}`,
    '[diff "x"]',
    `\ttextconv = ${tripwire("textconv")}`,
    `\tcommand = ${tripwire("diffcommand")}`,
    '[filter "evil"]',
    `\tclean = ${tripwire("clean")}`,
    `\tsmudge = ${tripwire("smudge")}`,
    `\tprocess = ${tripwire("process")}`,
    "\trequired = true",
    "[credential]",
    `\thelper = !${tripwire("credential")}`,
    "[gpg]",
    `\tprogram = ${tripwire("gpg")}`,
    "[commit]",
    "\tgpgsign = true",
    "[uploadpack]",
    `\tpackObjectsHook = ${tripwire("packobjects")}`,
    "",
  ].join("\n");
}

beforeAll(async () => {
  const root = tempDir("hone-gitsafe-probe4-");
  gitDir = join(root, "harnesses.git");
  const repo = HarnessRepo.init(gitDir);
  const pkg = join(root, "pkg");
  mkdirSync(pkg);
  writeFileSync(join(pkg, "agent.yaml"), "name: x\n");
  writeFileSync(join(pkg, ".gitattributes"), "* filter=evil diff=x\n");
  writeFileSync(join(pkg, "prompt.md"), "version 1\n");
  first = await repo.commitDir(pkg, "v1", undefined, 1);
  writeFileSync(join(pkg, "prompt.md"), "version 2\n");
  symlinkSync("prompt.md", join(pkg, "link.md")); // a link: git itself checks this version out
  second = await repo.commitDir(pkg, "v2", first, 2);
  repo.createRef("refs/heads/main", second);
  repo.createRef("refs/candidates/r01-k0", second);
  // Packed, as `git gc` leaves a repository: nothing is read in-process, git reads it all.
  plainGit(gitDir, ["pack-refs", "--all"]);
  plainGit(gitDir, ["repack", "-a", "-d", "-q"]);
  plainGit(gitDir, ["prune-packed"]);
  expect(readdirSync(join(gitDir, "objects")).sort()).toEqual(["info", "pack"]);
  // Then the config turns hostile, in the repository and in a .gitconfig read as the user's own were HOME there.
  appendFileSync(join(gitDir, "config"), hostileConfig());
  writeFileSync(join(gitDir, ".gitconfig"), hostileConfig());
  mkdirSync(join(gitDir, "info"), { recursive: true });
  writeFileSync(join(gitDir, "info", "attributes"), "* filter=evil diff=x\n");
  writeFileSync(join(marks, "attributes"), "* filter=evil diff=x\n");
}, 60_000);

const ran = () => readdirSync(marks).filter((f) => !f.endsWith(".sh") && f !== "hooks" && f !== "attributes");

describe("git over a hostile harnesses.git", () => {
  it("checks out a packed version with no filter, hook or monitor the repository names run", () => {
    const out = join(tempDir(), "best");
    new HarnessRepo(gitDir).materialize(second, out);
    expect(readFileSync(join(out, "prompt.md"), "utf8")).toBe("version 2\n");
    expect(readFileSync(join(out, "link.md"), "utf8")).toBe("version 2\n");
    expect(ran()).toEqual([]);
  });

  it("diffs, lists and shows packed versions as plain text, running nothing", () => {
    const repo = new HarnessRepo(gitDir);
    expect(repo.diff(first, second)).toMatch(/^-version 1\n\+version 2$/m);
    expect(repo.files(second)).toEqual([".gitattributes", "agent.yaml", "link.md", "prompt.md"]);
    expect(repo.show(second, "prompt.md")).toBe("version 2\n");
    expect(repo.isAncestor(first, second)).toBe(true);
    expect(ran()).toEqual([]);
  });

  it("makes its own empty repository again when a temp cleaner removed it (a long-running hone view)", async () => {
    const tmp = tempDir("hone-gitsafe-probe4-tmp-");
    const before = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      vi.resetModules(); // a fresh git-safe.ts, which makes its repository under this TMPDIR
      const { HarnessRepo: Fresh } = await import("../../src/store/git.ts");
      const repo = new Fresh(gitDir);
      expect(repo.diff(first, second)).toMatch(/^\+version 2$/m);
      const made = readdirSync(tmp).filter((d) => d.startsWith("hone-git-"));
      expect(made).toHaveLength(1);
      for (const d of made) rmSync(join(tmp, d), { recursive: true, force: true });
      expect(repo.diff(first, second)).toMatch(/^\+version 2$/m);
      expect(repo.isAncestor(first, second)).toBe(true);
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
  });

  it("lists and shows a file whose name or text begins or ends with white space as it is", async () => {
    const pkg = tempDir("hone-gitsafe-probe4-space-");
    writeFileSync(join(pkg, " lead.md"), "  indented\n\n");
    writeFileSync(join(pkg, "agent.yaml"), "name: x\n");
    const repo = HarnessRepo.init(join(tempDir(), "harnesses.git"));
    const sha = await repo.commitDir(pkg, "spaces", undefined, 1);
    expect(repo.files(sha)).toEqual([" lead.md", "agent.yaml"]);
    expect(repo.show(sha, " lead.md")).toBe("  indented\n\n");
  });

  it("resolves names given on the command line without git reading the repository's refs or config", () => {
    const repo = new HarnessRepo(gitDir);
    expect(repo.resolve("main")).toBe(second);
    expect(repo.resolve("HEAD")).toBe(second);
    expect(repo.resolve("r01-k0")).toBe(second);
    expect(repo.resolve(first.slice(0, 10))).toBe(first);
    expect(repo.resolve("../../etc/passwd")).toBeUndefined();
    expect(ran()).toEqual([]);
  });

  it("drops a packed ref without git's hooks", () => {
    const repo = new HarnessRepo(gitDir);
    repo.createRef("refs/candidates/r01-k1", first);
    plainGit(gitDir, ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "pack-refs", "--all"]);
    repo.dropRef("refs/candidates/r01-k1");
    expect(repo.resolve("refs/candidates/r01-k1")).toBeUndefined();
    expect(repo.resolve("refs/candidates/r01-k0")).toBe(second);
    expect(plainGit(gitDir, ["-c", "core.hooksPath=/dev/null", "for-each-ref", "--format=%(refname)"])).toBe(
      "refs/candidates/r01-k0\nrefs/heads/main",
    );
    expect(ran()).toEqual([]);
  });

  it("never gives git a recorded id that is an option", () => {
    const repo = new HarnessRepo(gitDir);
    const written = join(marks, "written");
    expect(() => repo.diff(first, `--output=${written}`)).toThrow(/is not a commit id/);
    expect(() => repo.materialize(`--index-output=${written}`, join(tempDir(), "x"))).toThrow(/is not a commit id/);
    expect(() => repo.show(`--output=${written}`, "prompt.md")).toThrow(/is not a commit id/);
    expect(repo.isAncestor(`--output=${written}`, second)).toBe(false);
    expect(existsSync(written)).toBe(false);
  });

  it("reads a ref that holds no commit id, a FIFO or a link to another file as missing", () => {
    const dir = join(tempDir(), "refs.git");
    const repo = HarnessRepo.init(dir);
    mkdirSync(join(dir, "refs", "candidates"), { recursive: true });
    writeFileSync(join(dir, "refs", "heads", "main"), `--output=${join(marks, "written")}\n`);
    execFileSync("mkfifo", [join(dir, "refs", "candidates", "fifo")]);
    writeFileSync(join(marks, "secret"), `${"a".repeat(40)}\n`);
    symlinkSync(join(marks, "secret"), join(dir, "refs", "candidates", "link"));
    expect(repo.resolve("refs/heads/main")).toBeUndefined();
    expect(repo.resolve("refs/candidates/fifo")).toBeUndefined();
    expect(repo.resolve("refs/candidates/link")).toBeUndefined();
    rmSync(join(marks, "secret"));
  });

  it("refuses a loose object that is a FIFO (git would wait on it for good) instead of reading it", async () => {
    const dir = join(tempDir(), "fifo.git");
    const repo = HarnessRepo.init(dir);
    const pkg = tempDir();
    writeFileSync(join(pkg, "agent.yaml"), "name: x\n");
    const a = await repo.commitDir(pkg, "a", undefined, 1);
    writeFileSync(join(pkg, "agent.yaml"), "name: y\n");
    const b = await repo.commitDir(pkg, "b", a, 2);
    const obj = join(dir, "objects", b.slice(0, 2), b.slice(2));
    rmSync(obj);
    execFileSync("mkfifo", [obj]);
    expect(repo.isAncestor(a, b)).toBe(false);
    expect(() => repo.materialize(b, join(tempDir(), "out"))).toThrow(/is not a regular file/);
  });
});
