// Compiles hone's own Python modules (src/task/python) to bytecode beside them, as `npm ci` runs it ("prepare"). The
// warm pool's evaluator and program zygote see that folder read-only in their sandbox, so without it they compiled
// every module they import from source at each start: importing the zygote's took 23 ms from source, 10-14 ms from
// bytecode, the evaluator's (with numpy) 117 ms against 102-107 ms, on this 2-core VM.
// Hash-checked bytecode: Python compares the source's hash before using it, so a module edited (or checked out)
// since is compiled afresh, never run stale. An interpreter other than this python3 has its own cache tag and
// compiles from source, as before. Without python3, or for a module it cannot compile, one line says so; it exits 0.
// `node scripts/compile-python.mjs [folder]`: src/task/python unless another is given (the tests use a copy).
import { execFileSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIR = resolve(process.argv[2] ?? join(ROOT, "src", "task", "python"));
// PATH and HOME only: PYTHONPYCACHEPREFIX would put the files elsewhere than where the sandbox looks.
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/" };
const args = ["-m", "compileall", "-q", "--invalidation-mode", "checked-hash", DIR];

try {
  execFileSync("python3", args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
} catch (err) {
  // compileall reports a file it cannot compile on stdout, and goes on with the others.
  const said = `${err.stderr ?? ""}\n${err.stdout ?? ""}`.trim().split("\n")[0];
  const why = err.code === "ENOENT" ? "python3 is not on PATH" : said || err.message;
  console.log(`hone's Python modules were not all compiled ahead (${why}); those are compiled when they load`);
}
