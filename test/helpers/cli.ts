import { spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./fixtures.ts";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the hone CLI as a user would: `node bin/hone.js …` in a child process. */
export function hone(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts a long-running hone verb (view, worker…) and resolves with its first stdout line once it prints one. */
export function startHone(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ firstLine: string; stop: () => Promise<void>; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`hone ${args.join(" ")} printed nothing in time\n${err}`));
    }, opts.timeoutMs ?? 60_000);
    child.stderr.on("data", (c) => (err += c));
    child.stdout.on("data", (c) => {
      const before = out;
      out += c;
      if (!before.includes("\n") && out.includes("\n")) {
        clearTimeout(timer);
        resolve({
          firstLine: out.slice(0, out.indexOf("\n")),
          output: () => out + err,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done();
              child.once("close", () => done());
              child.kill("SIGTERM");
            }),
        });
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`hone ${args.join(" ")} exited with ${code}\n${err}`));
    });
  });
}

/**
 * `hone optimize` on circle packing with the offline model: the small runs the end-to-end tests make. By default the
 * request cache is off and the summary is JSON; `cache: null` leaves the cache flags out (the default cache).
 */
export function optimizeArgs(o: {
  rounds: number;
  proposals: number;
  maxEvals: number;
  seed?: number;
  out?: string;
  cache?: string[] | null;
  json?: boolean;
  extra?: string[];
}): string[] {
  return [
    "optimize",
    "--task",
    "circle-packing",
    ...["--rounds", String(o.rounds), "--proposals", String(o.proposals), "--max-evals", String(o.maxEvals)],
    ...(o.seed === undefined ? [] : ["--seed", String(o.seed)]),
    ...(o.cache === undefined ? ["--cache", "off"] : (o.cache ?? [])),
    ...(o.extra ?? []),
    ...(o.out ? ["--out", o.out] : []),
    ...(o.json === false ? [] : ["--json"]),
  ];
}

/**
 * The lines of a command's stderr beyond the one note a machine without bubblewrap rightly prints (what is not
 * isolated): a test that wants a quiet run expects this to be empty, on every machine.
 */
export function unexpectedStderr(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l && !/^note: evaluated programs are not fully isolated/.test(l));
}

/**
 * Runs hone, SIGKILLs it as soon as it has printed the `nth` line matching `after` (on stdout, or `stream`), and
 * resolves once it is gone.
 */
export function killAfterLine(args: string[], after: RegExp, nth = 1, stream: "stdout" | "stderr" = "stdout"): Promise<void> {
  const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args], {
    cwd: ROOT,
    stdio: ["ignore", stream === "stdout" ? "pipe" : "ignore", stream === "stderr" ? "pipe" : "ignore"],
  });
  // Listen for the exit first: the child may finish on its own before the line arrives.
  const gone = new Promise<void>((resolve) => child.on("close", () => resolve()));
  let seen = 0;
  let buffer = "";
  (stream === "stdout" ? child.stdout : child.stderr)?.on("data", (d) => {
    buffer += d;
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) if (after.test(line) && ++seen === nth) child.kill("SIGKILL");
  });
  return gone;
}
