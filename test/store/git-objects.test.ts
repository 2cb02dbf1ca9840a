// Commit ids must stay those of every run recorded before: the objects hone writes itself are byte for byte git's,
// the same as isomorphic-git (which wrote them until now) gives for the same folder, parent, message and date.
import { execFileSync } from "node:child_process";
import fs, { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { readdir, readFile, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import git, { type TreeEntry } from "isomorphic-git";
import { describe, expect, it } from "vitest";
import { HarnessRepo } from "../../src/store/git.ts";
import { copyOf, GENERATED_HARNESS, tempDir } from "../helpers/fixtures.ts";

/** The commit isomorphic-git writes for a folder, as HarnessRepo.commitDir did with it. */
async function isomorphicCommit(gitdir: string, dir: string, message: string, parent: string | undefined, order: number) {
  const writeDir = async (path: string): Promise<string | undefined> => {
    const tree: TreeEntry[] = [];
    for (const e of await readdir(path, { withFileTypes: true })) {
      const full = join(path, e.name);
      if (e.isDirectory()) {
        const oid = await writeDir(full);
        if (oid) tree.push({ mode: "040000", path: e.name, oid, type: "tree" });
      } else if (e.isSymbolicLink()) {
        const blob = new TextEncoder().encode(await readlink(full));
        tree.push({ mode: "120000", path: e.name, oid: await git.writeBlob({ fs, gitdir, blob }), type: "blob" });
      } else {
        const mode = ((await stat(full)).mode & 0o111) !== 0 ? "100755" : "100644";
        tree.push({ mode, path: e.name, oid: await git.writeBlob({ fs, gitdir, blob: await readFile(full) }), type: "blob" });
      }
    }
    return tree.length === 0 ? undefined : git.writeTree({ fs, gitdir, tree });
  };
  const tree = (await writeDir(dir)) as string;
  const who = { name: "hone", email: "hone@localhost", timestamp: 1_700_000_000 + order, timezoneOffset: 0 };
  return git.writeCommit({
    fs,
    gitdir,
    commit: { message: `${message}\n`, tree, parent: parent ? [parent] : [], author: who, committer: who },
  });
}

describe("git objects written by hone", () => {
  it("give the commit ids isomorphic-git gives: names that sort differently as folders, modes, links, Unicode", async () => {
    const pkg = copyOf(GENERATED_HARNESS);
    for (const d of ["foo", "foo-bar", "ü"]) mkdirSync(join(pkg, d), { recursive: true });
    // UTF-16 puts the emoji (a surrogate pair) before U+FF5E; git, comparing UTF-8 bytes, puts it after.
    for (const f of ["\u{1F600}.md", "\uFF5E.md"]) writeFileSync(join(pkg, f), f);
    writeFileSync(join(pkg, "foo", "a"), "1\n");
    writeFileSync(join(pkg, "foo.txt"), "2\n");
    writeFileSync(join(pkg, "foo-bar", "b"), "");
    writeFileSync(join(pkg, "ü", "é.md"), "ünïcode\r\n");
    writeFileSync(join(pkg, "run.sh"), "#!/bin/sh\n");
    chmodSync(join(pkg, "run.sh"), 0o755);
    symlinkSync("prompt.md", join(pkg, "link.md"));
    const ours = HarnessRepo.init(join(tempDir(), "ours.git"));
    const theirs = join(tempDir(), "theirs.git");
    execFileSync("git", ["init", "--bare", "--quiet", theirs]);
    const first = await ours.commitDir(pkg, "seed", undefined, 0);
    expect(first).toBe(await isomorphicCommit(theirs, pkg, "seed", undefined, 0));
    writeFileSync(join(pkg, "prompt.md"), "changed\n");
    const message = "r01-k0: system_prompt\n\n\nwith a body\n\n";
    const second = await ours.commitDir(pkg, message, first, 7);
    expect(second).toBe(await isomorphicCommit(theirs, pkg, message, first, 7));
    execFileSync("git", ["--git-dir", ours.gitDir, "fsck", "--strict", "--no-progress"], { stdio: "pipe" });
  });
});
