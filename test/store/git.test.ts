import { execFileSync } from "node:child_process";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HarnessRepo } from "../../src/store/git.ts";
import { commitContent, treeContent, writeObject } from "../../src/store/git-objects.ts";
import { copyOf, GENERATED_HARNESS, tempDir } from "../helpers/fixtures.ts";

const gitOut = (gitDir: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) =>
  execFileSync("git", ["--git-dir", gitDir, ...args], { encoding: "utf8", env: { ...process.env, ...env }, cwd }).trim();

describe("HarnessRepo.commitDir", () => {
  it("writes the same tree git add --all would, with modes, nested folders and no empty folders", async () => {
    const pkg = copyOf(GENERATED_HARNESS);
    mkdirSync(join(pkg, "a"), { recursive: true });
    mkdirSync(join(pkg, "a-b"), { recursive: true });
    writeFileSync(join(pkg, "a", "y.txt"), "2\n");
    writeFileSync(join(pkg, "a-b", "x.txt"), "1\n");
    writeFileSync(join(pkg, "a.txt"), "3\n");
    mkdirSync(join(pkg, "empty", "deeper"), { recursive: true });
    writeFileSync(join(pkg, "run.sh"), "#!/bin/sh\necho hi\n");
    chmodSync(join(pkg, "run.sh"), 0o755);
    const gitDir = join(tempDir(), "h.git");
    const repo = HarnessRepo.init(gitDir);
    const first = await repo.commitDir(pkg, "seed", undefined, 0);
    const index = join(tempDir(), "index");
    gitOut(gitDir, ["add", "--all", "--force", "."], { GIT_INDEX_FILE: index, GIT_WORK_TREE: pkg }, pkg);
    expect(gitOut(gitDir, ["rev-parse", `${first}^{tree}`])).toBe(gitOut(gitDir, ["write-tree"], { GIT_INDEX_FILE: index }));
    expect(gitOut(gitDir, ["ls-tree", first, "run.sh"])).toMatch(/^100755 blob/);
    expect(gitOut(gitDir, ["ls-tree", "-r", "--name-only", first])).not.toMatch(/empty/);

    writeFileSync(join(pkg, "prompt.md"), "changed\n");
    const second = await repo.commitDir(pkg, "r01-k0", first, 1);
    expect(gitOut(gitDir, ["rev-parse", `${second}^`])).toBe(first);
    expect(gitOut(gitDir, ["log", "--format=%an <%ae> %at %s", second])).toBe(
      "hone <hone@localhost> 1700000001 r01-k0\nhone <hone@localhost> 1700000000 seed",
    );
    // The same content, parent, message and order give the same commit id.
    expect(await repo.commitDir(pkg, "r01-k0", first, 1)).toBe(second);
    execFileSync("git", ["--git-dir", gitDir, "fsck", "--strict", "--no-progress"], { stdio: "pipe" });

    const out = join(tempDir(), "out");
    repo.materialize(second, out);
    expect(readFileSync(join(out, "prompt.md"), "utf8")).toBe("changed\n");
    expect(statSync(join(out, "run.sh")).mode & 0o111).not.toBe(0);
  });
});

describe("HarnessRepo reads its versions in-process", () => {
  /**
   * A package with a nested folder, an executable file and (unless `link` is false) a symbolic link, committed twice.
   * A commit that holds a link is checked out by git itself; one without, in-process.
   */
  async function twoVersions({ link = true } = {}) {
    const pkg = copyOf(GENERATED_HARNESS);
    mkdirSync(join(pkg, "skills", "deep"), { recursive: true });
    writeFileSync(join(pkg, "skills", "deep", "SKILL.md"), "---\nname: deep\ndescription: d\n---\nbody\n");
    writeFileSync(join(pkg, "run.sh"), "#!/bin/sh\n");
    chmodSync(join(pkg, "run.sh"), 0o755);
    if (link) symlinkSync("prompt.md", join(pkg, "link.md"));
    const gitDir = join(tempDir(), "h.git");
    const repo = HarnessRepo.init(gitDir);
    const first = await repo.commitDir(pkg, "seed", undefined, 0);
    writeFileSync(join(pkg, "prompt.md"), "changed\n");
    const second = await repo.commitDir(pkg, "next", first, 1);
    return { repo, gitDir, first, second };
  }

  /** Every file of a folder: its path, mode bits and content (a link's target). */
  function snapshot(dir: string): string[] {
    const out: string[] = [];
    const walk = (d: string, prefix: string) => {
      for (const name of readdirSync(d).sort()) {
        const full = join(d, name);
        const st = lstatSync(full);
        if (st.isDirectory()) walk(full, `${prefix}${name}/`);
        else if (st.isSymbolicLink()) out.push(`${prefix}${name} -> ${readlinkSync(full)}`);
        else out.push(`${prefix}${name} ${(st.mode & 0o111) !== 0 ? "x" : "-"} ${readFileSync(full, "utf8")}`);
      }
    };
    walk(dir, "");
    return out;
  }

  it.each([
    ["in-process", false],
    ["by git", true],
  ])("checks out a version as git checkout-index does, and the repository it made is git's own (%s)", async (_, link) => {
    const { repo, gitDir, second } = await twoVersions({ link });
    execFileSync("git", ["--git-dir", gitDir, "fsck", "--strict", "--no-progress"], { stdio: "pipe" });
    expect(gitOut(gitDir, ["symbolic-ref", "HEAD"])).toBe("refs/heads/main");
    const ours = join(tempDir(), "ours");
    repo.materialize(second, ours);
    const theirs = join(tempDir(), "theirs");
    mkdirSync(theirs);
    const env = { GIT_INDEX_FILE: join(tempDir(), "index"), GIT_WORK_TREE: theirs };
    gitOut(gitDir, ["read-tree", second], env);
    gitOut(gitDir, ["checkout-index", "--all", "--force"], env, theirs);
    expect(snapshot(ours)).toEqual(snapshot(theirs));
    if (link) expect(snapshot(ours)).toContain("link.md -> prompt.md");
  });

  it("answers ancestry from the commits, and asks git once they are packed", async () => {
    const { repo, gitDir, first, second } = await twoVersions();
    expect([repo.isAncestor(first, second), repo.isAncestor(second, first), repo.isAncestor(second, second)]).toEqual([
      true,
      false,
      true,
    ]);
    repo.createRef("refs/candidates/x", second);
    gitOut(gitDir, ["gc", "--quiet", "--prune=now"]);
    expect(readdirSync(join(gitDir, "objects")).filter((d) => /^[0-9a-f]{2}$/.test(d))).toEqual([]);
    expect([repo.isAncestor(first, second), repo.isAncestor(second, first)]).toEqual([true, false]);
    const out = join(tempDir(), "packed");
    repo.materialize(second, out);
    expect(readFileSync(join(out, "prompt.md"), "utf8")).toBe("changed\n");
  });

  it("never writes through a link: one the commit holds beside a folder of its name, or one already there", async () => {
    const { repo, gitDir, second } = await twoVersions();
    const outside = join(tempDir(), "outside");
    mkdirSync(outside);
    // A crafted commit: a link "a" to the outside folder, and a folder "a" holding x.txt.
    const blob = writeObject(gitDir, "blob", Buffer.from("pwned\n"));
    const link = writeObject(gitDir, "blob", Buffer.from(outside));
    const sub = writeObject(gitDir, "tree", treeContent([{ mode: "100644", name: "x.txt", oid: blob }]));
    const tree = writeObject(
      gitDir,
      "tree",
      treeContent([
        { mode: "120000", name: "a", oid: link },
        { mode: "40000", name: "a", oid: sub },
      ]),
    );
    const crafted = writeObject(gitDir, "commit", commitContent(tree, [], { name: "x", email: "x@x", timestamp: 1 }, "x"));
    try {
      repo.materialize(crafted, join(tempDir(), "c"));
    } catch {
      // git refuses such a tree: refusing is fine, writing outside is not
    }
    expect(readdirSync(outside)).toEqual([]);
    // A link already in the folder, where the commit has a folder: replaced, not followed.
    const target = join(tempDir(), "t");
    mkdirSync(target);
    symlinkSync(outside, join(target, "skills"));
    repo.materialize(second, target);
    expect(readdirSync(outside)).toEqual([]);
    expect(lstatSync(join(target, "skills")).isDirectory()).toBe(true);
    // A link to a folder, where the commit has a file (checked out in-process): the link goes, the folder stays whole.
    const plain = await twoVersions({ link: false });
    const inner = join(outside, "kept");
    mkdirSync(inner);
    const where = join(tempDir(), "w");
    mkdirSync(where);
    symlinkSync(outside, join(where, "prompt.md"));
    plain.repo.materialize(plain.second, where);
    expect(readdirSync(outside)).toEqual(["kept"]);
    expect(readFileSync(join(where, "prompt.md"), "utf8")).toBe("changed\n");
  });

  it.each([
    ["in-process", false],
    ["by git", true],
  ])("replaces a folder where the commit has a file, as git's own checkout does (checked out %s)", async (_, link) => {
    const { repo, gitDir, second } = await twoVersions({ link });
    const prepared = () => {
      const dir = join(tempDir(), "d");
      mkdirSync(join(dir, "prompt.md", "inner"), { recursive: true });
      writeFileSync(join(dir, "prompt.md", "inner", "x.txt"), "left over\n");
      return dir;
    };
    const ours = prepared();
    repo.materialize(second, ours);
    const theirs = prepared();
    const env = { GIT_INDEX_FILE: join(tempDir(), "index"), GIT_WORK_TREE: theirs };
    gitOut(gitDir, ["read-tree", second], env);
    gitOut(gitDir, ["checkout-index", "--all", "--force"], env, theirs);
    expect(readFileSync(join(ours, "prompt.md"), "utf8")).toBe("changed\n");
    expect(snapshot(ours)).toEqual(snapshot(theirs));
  });

  it("refuses an object whose bytes are not its name", async () => {
    const { repo, gitDir, second } = await twoVersions();
    const tree = gitOut(gitDir, ["rev-parse", `${second}^{tree}`]);
    const file = join(gitDir, "objects", tree.slice(0, 2), tree.slice(2));
    const other = gitOut(gitDir, ["rev-parse", `${second}^^{tree}`]);
    chmodSync(file, 0o644);
    writeFileSync(file, readFileSync(join(gitDir, "objects", other.slice(0, 2), other.slice(2))));
    expect(() => repo.materialize(second, join(tempDir(), "bad"))).toThrow(/is corrupt/);
  });

  it("a run's repository opened again drops the ref locks a killed writer left, so its refs can move again", async () => {
    const { gitDir, first, second } = await twoVersions();
    const before = HarnessRepo.forRun(gitDir);
    before.createRef("refs/heads/main", first);
    writeFileSync(join(gitDir, "refs", "heads", "main.lock"), `${second}\n`);
    mkdirSync(join(gitDir, "refs", "candidates"), { recursive: true });
    writeFileSync(join(gitDir, "refs", "candidates", "r01-k0.lock"), `${second}\n`);
    expect(() => before.createRef("refs/candidates/r01-k0", second)).toThrow(/EEXIST/);
    const reopened = HarnessRepo.forRun(gitDir);
    expect(reopened.fastForwardMain(second, first)).toBe(true);
    reopened.createRef("refs/candidates/r01-k0", second);
    expect(gitOut(gitDir, ["rev-parse", "refs/heads/main", "refs/candidates/r01-k0"])).toBe(`${second}\n${second}`);
    expect(readdirSync(join(gitDir, "refs", "candidates"))).toEqual(["r01-k0"]);
    // A candidate's ref a killed attempt left at another commit is replaced, loose or packed.
    reopened.replaceRef("refs/candidates/r01-k0", first);
    expect(reopened.resolve("refs/candidates/r01-k0")).toBe(first);
    gitOut(gitDir, ["pack-refs", "--all"]);
    reopened.replaceRef("refs/candidates/r01-k0", second);
    expect(gitOut(gitDir, ["rev-parse", "refs/candidates/r01-k0"])).toBe(second);
    // A ref a killed attempt left, when the attempt made again has no commit: dropped, loose or packed.
    reopened.dropRef("refs/candidates/r01-k0");
    reopened.createRef("refs/candidates/r01-k1", first);
    gitOut(gitDir, ["pack-refs", "--all"]);
    reopened.dropRef("refs/candidates/r01-k1");
    reopened.dropRef("refs/candidates/never");
    expect(gitOut(gitDir, ["for-each-ref", "--format=%(refname)", "refs/candidates/"])).toBe("");
  });

  it("never leaves half a version: a checkout that fails part-way leaves the folder as it was and nothing beside it", async () => {
    // A link in the commit: git checks it out, and writes agent.yaml before it finds prompt.md's content missing.
    const { repo, gitDir, second } = await twoVersions({ link: true });
    const blob = gitOut(gitDir, ["rev-parse", `${second}:prompt.md`]);
    rmSync(join(gitDir, "objects", blob.slice(0, 2), blob.slice(2)), { force: true });
    const parent = tempDir();
    expect(() => repo.materialize(second, join(parent, "fresh"))).toThrow();
    expect(readdirSync(parent)).toEqual([]);
    const kept = join(parent, "kept");
    mkdirSync(kept);
    writeFileSync(join(kept, "note.txt"), "before\n");
    expect(() => repo.materialize(second, kept)).toThrow();
    expect(readdirSync(parent)).toEqual(["kept"]);
    expect(readdirSync(kept)).toEqual(["note.txt"]);
    // What a checkout killed part-way left beside a folder is cleared by the next checkout of that folder.
    const plain = await twoVersions({ link: false });
    mkdirSync(join(parent, ".kept.partial-abc123"));
    writeFileSync(join(parent, ".kept.partial-abc123", "agent.yaml"), "half\n");
    mkdirSync(join(parent, ".other.partial-abc123"));
    plain.repo.materialize(plain.second, kept);
    expect(readdirSync(parent).sort()).toEqual([".other.partial-abc123", "kept"]);
    expect(readFileSync(join(kept, "prompt.md"), "utf8")).toBe("changed\n");
  });
});
