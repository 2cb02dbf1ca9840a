// bin/hone.js started as a program (`hone`, `npx hone`): its first lines are a shell script that runs node on the file,
// for the verbs that run long with V8's young generation capped unless NODE_OPTIONS already sets that cap; to node they
// are a string and a comment.
import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const BIN = join(ROOT, "bin", "hone.js");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

/** A `node` first on PATH that writes the arguments it was started with, each ended by a NUL, and exits. */
function fakeNode(): { path: string; args: () => string[] } {
  const dir = tempDir("hone-launcher-");
  const out = join(dir, "args.txt");
  const node = join(dir, "node");
  writeFileSync(node, `#!/bin/sh\nprintf '%s\\0' "$@" > ${JSON.stringify(out)}\n`);
  chmodSync(node, 0o755);
  return { path: `${dir}:${process.env.PATH}`, args: () => readFileSync(out, "utf8").split("\0").slice(0, -1) };
}

describe("bin/hone.js as a program", () => {
  it("runs node on itself with the young generation capped for a verb that runs long, every argument as given", () => {
    for (const verb of ["optimize", "train", "compare", "worker", "eval", "view"]) {
      const node = fakeNode();
      execFileSync(BIN, [verb, "--task", "a b", "*", ""], { env: { ...process.env, PATH: node.path, NODE_OPTIONS: "" } });
      expect(node.args()).toEqual(["--max-semi-space-size=8", BIN, verb, "--task", "a b", "*", ""]);
    }
  });

  it("runs node without the cap for the short verbs and no verb (the flag costs every start ~20 ms)", () => {
    for (const args of [["--help"], ["replay", "optimize"], ["run", "--task", "x"], []]) {
      const node = fakeNode();
      execFileSync(BIN, args, { env: { ...process.env, PATH: node.path, NODE_OPTIONS: "" } });
      expect(node.args()).toEqual([BIN, ...args]);
    }
  });

  it("keeps a cap the user set in NODE_OPTIONS", () => {
    const node = fakeNode();
    const env = { ...process.env, PATH: node.path, NODE_OPTIONS: "--max-semi-space-size=2 --no-warnings" };
    execFileSync(BIN, ["optimize"], { env });
    expect(node.args()).toEqual([BIN, "optimize"]);
  });

  it("starts hone through a symlink, as npm's bin link does, and node itself reads the file as JavaScript", () => {
    const link = join(tempDir("hone-launcher-link-"), "hone");
    symlinkSync(BIN, link);
    expect(execFileSync(link, ["--version"], { encoding: "utf8" }).trim()).toBe(VERSION);
    expect(execFileSync(process.execPath, [BIN, "--version"], { encoding: "utf8" }).trim()).toBe(VERSION);
  });
});
