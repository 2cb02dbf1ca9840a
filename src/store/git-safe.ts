// Every git process hone starts over a run's `harnesses.git`. A run folder is untrusted (shared, downloaded, copied
// from a cluster, or swapped while a run was stopped): its repository's config could name programs git runs
// (`diff.external`, textconv and filter drivers, `core.fsmonitor`, hooks through `core.hooksPath`, a promisor remote's
// upload-pack, `include.path` of any file), its refs could be FIFOs or links, and the commit ids its hone.db records
// could be options to git (`--output=<file>`). So git never opens the run's repository: it runs against an empty
// repository of hone's own, made once per process, with the run's `objects/` as its object store; system and global
// config are not read, and only full hexadecimal ids (checked by the caller with `isOid`) name commits.
import { spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A commit id as hone writes it (SHA-1; SHA-256 repositories allowed). Anything else is never given to git. */
const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
export const isOid = (sha: unknown): sha is string => typeof sha === "string" && OID.test(sha);

/** The most git output one read for the console takes: a harness file, a diff, a file listing. */
export const MAX_GIT_BYTES = 2 * 1024 * 1024;
/** A read for the console still running after this is stopped (a FIFO among the objects would block it for good). */
const READ_TIMEOUT_MS = 10_000;
/** The same for the CLI and the loops, which check out a packed version at most. */
const SYNC_TIMEOUT_MS = 30_000;

let emptyDir: string | undefined;

/**
 * hone's own empty bare repository, made on first use and removed when the process exits; made again when it is gone
 * (a temp cleaner under a long-running `hone view` or `hone worker`).
 */
function emptyRepo(): string {
  if (emptyDir && existsSync(join(emptyDir, "HEAD"))) return emptyDir;
  const dir = mkdtempSync(join(tmpdir(), "hone-git-"));
  for (const d of ["objects", "refs/heads", "refs/tags", "info"]) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(dir, "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = true\n");
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  emptyDir = dir;
  return dir;
}

/** The environment of a git process over the objects of `gitDir`: no config but hone's own repository's. */
function env(gitDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = emptyRepo();
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_OBJECT_DIRECTORY: join(gitDir, "objects"),
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_NO_LAZY_FETCH: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
    ...extra,
  };
}

/** git's arguments: hone's own repository, and no hook or file-system monitor whatever any config says. */
const argv = (args: string[]) => [
  "--git-dir",
  emptyRepo(),
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.attributesFile=/dev/null",
  ...args,
];

/**
 * Runs git over the objects of the run repository `gitDir`, synchronously; its output, trimmed (`raw`: as written,
 * for a file's bytes and NUL-separated names, whose spaces are theirs). Throws with git's message when it fails or
 * runs longer than 30 seconds. `env` adds to git's environment (an index file, a work tree).
 */
export function gitSync(
  gitDir: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; raw?: boolean } = {},
): string {
  const r = spawnSync("git", argv(args), {
    encoding: "utf8",
    cwd: opts.cwd,
    env: env(gitDir, opts.env),
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
    timeout: SYNC_TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  if (r.error) throw new Error(`git ${args[0]} over ${gitDir}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(
      `git ${args[0]} over ${gitDir} ${r.signal ? `stopped (${r.signal})` : `exited ${r.status}`}: ${r.stderr.trim().slice(0, 2000)}`,
    );
  return opts.raw ? r.stdout : r.stdout.trim();
}

export interface GitText {
  text: string;
  /** Whether the output was longer than the cap and cut there. */
  truncated: boolean;
}

/** Runs git over the objects of `gitDir` without blocking the event loop, reading at most `cap` bytes of its output. */
export function gitRead(gitDir: string, args: string[], cap: number): Promise<GitText> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", argv(args), { env: env(gitDir), stdio: ["ignore", "pipe", "pipe"], timeout: READ_TIMEOUT_MS });
    const chunks: Buffer[] = [];
    let got = 0;
    let truncated = false;
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => {
      if (truncated) return;
      const room = cap - got;
      chunks.push(b.length > room ? b.subarray(0, room) : b);
      got += Math.min(b.length, room);
      if (b.length > room) {
        truncated = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (b: Buffer) => {
      if (stderr.length < 2000) stderr += b.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (truncated || code === 0) resolve({ text: Buffer.concat(chunks).toString("utf8"), truncated });
      else reject(new Error(`git ${args[0]} ${signal ? `stopped (${signal})` : `exited ${code}`}: ${stderr.trim()}`));
    });
  });
}

/**
 * The first `cap` bytes of `path` if it is a regular file, else undefined, never blocking: a ref or an object of a
 * run folder from someone else may be a FIFO (reading it would stop the process, the console's server with it) or a
 * link to any file of the reader's (its text would be shown as a commit id).
 */
export function readRegular(path: string, cap: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const buf = Buffer.alloc(Math.min(st.size, cap));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}
