// bin/hone.js started as a program (`hone`, `npx hone`): its first lines are a shell script that runs node on the file,
// for the verbs that run long with V8's young generation capped unless NODE_OPTIONS already sets that cap; to node they
// are a string and a comment.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const BIN = join(ROOT, "bin", "hone.js");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const LONG = ["optimize", "train", "compare", "worker", "eval", "view", "run"];
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A folder of this test's own, removed after it. */
function folder(prefix: string): string {
  const dir = tempDir(prefix);
  made.push(dir);
  return dir;
}

/**
 * A `node` first on PATH that writes its process id and then the arguments it was started with, each ended by a NUL,
 * and exits; and the launcher reached through a symlink in a folder whose name has a space (npm links its bins).
 */
function fakeNode(): { path: string; link: string; pid: () => number; args: () => string[] } {
  const dir = folder("hone-launcher-");
  const out = join(dir, "args.txt");
  const node = join(dir, "node");
  writeFileSync(node, `#!/bin/sh\nprintf '%s\\0' "$$" "$@" > ${JSON.stringify(out)}\n`);
  chmodSync(node, 0o755);
  mkdirSync(join(dir, "a b"));
  const link = join(dir, "a b", "hone");
  symlinkSync(BIN, link);
  const written = () => readFileSync(out, "utf8").split("\0").slice(0, -1);
  return { path: `${dir}:${process.env.PATH}`, link, pid: () => Number(written()[0]), args: () => written().slice(1) };
}

const run = (node: ReturnType<typeof fakeNode>, args: string[], nodeOptions = "") =>
  spawnSync(node.link, args, { env: { ...process.env, PATH: node.path, NODE_OPTIONS: nodeOptions } });

describe("bin/hone.js as a program", () => {
  it("runs node on itself with the young generation capped for a verb that runs long, every argument as given", () => {
    for (const verb of LONG) {
      const node = fakeNode();
      expect(run(node, [verb, "--task", "a b", "*", "", "-e", "$(id)"]).status).toBe(0);
      expect(node.args()).toEqual(["--max-semi-space-size=8", node.link, verb, "--task", "a b", "*", "", "-e", "$(id)"]);
    }
  });

  it("runs node without the cap for the short verbs and no verb (the flag costs every start ~20 ms)", () => {
    for (const args of [["--help"], ["replay", "optimize"], ["log", "runs/x"], ["optimize x"], []]) {
      const node = fakeNode();
      run(node, args);
      expect(node.args()).toEqual([node.link, ...args]);
    }
  });

  it("keeps a cap the user set in NODE_OPTIONS, in either spelling", () => {
    for (const options of ["--max-semi-space-size=2 --no-warnings", "--no-warnings --max_semi_space_size=2"]) {
      const node = fakeNode();
      run(node, ["optimize"], options);
      expect(node.args()).toEqual([node.link, "optimize"]);
    }
  });

  it("becomes node itself (exec): the process hone's user started, and may kill, is node", () => {
    const node = fakeNode();
    const child = run(node, ["optimize"]);
    expect(node.pid()).toBe(child.pid);
  });

  it("starts the real CLI through the link, and node itself reads the file as JavaScript", () => {
    expect(execFileSync(fakeNode().link, ["--version"], { encoding: "utf8" }).trim()).toBe(VERSION);
    expect(execFileSync(process.execPath, [BIN, "--version"], { encoding: "utf8" }).trim()).toBe(VERSION);
  });
});
