import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HarnessRepo } from "../../src/store/git.ts";
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
