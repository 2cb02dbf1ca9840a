// Start-up, whole processes as a user meets them: `hone --help` beside `node -e ""`, and the set-up before round 0
// of `hone optimize` (task checks, records, both offline models and the warm pool) in a fresh process each time.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error: bin/bundle.js is plain JavaScript, without declarations.
import { freshBundle } from "../bin/bundle.js";
import { report, spread } from "./lib.ts";

const ROOT = join(import.meta.dirname, "..");
const HONE = join(ROOT, "bin", "hone.js");
const REPS = Number(process.env.BENCH_REPS ?? 10);

function wall(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const t = performance.now();
  execFileSync(process.execPath, args, { stdio: "ignore", env: { ...process.env, ...env } });
  return (performance.now() - t) / 1000;
}

/** Seconds from spawning `hone optimize` to its first line ("optimizing … in <dir>"), printed once set up. */
function untilFirstLine(out: string): Promise<number> {
  const t = performance.now();
  const child = spawn(
    process.execPath,
    [HONE, "optimize", "--task", "circle-packing", "--executor", "offline", "--proposer", "offline"].concat([
      "--rounds",
      "1",
      "--proposals",
      "1",
      "--max-evals",
      "2",
      "--noise-repeats",
      "1",
      "--cache",
      "off",
      "--out",
      out,
    ]),
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    let first: number | undefined;
    child.stdout.on("data", () => {
      first ??= (performance.now() - t) / 1000;
    });
    child.on("close", (code) =>
      code === 0 && first !== undefined ? resolve(first) : reject(new Error(`hone optimize exited ${code}`)),
    );
  });
}

export async function benchStartup(): Promise<boolean> {
  const bundled = Boolean(freshBundle("hone"));
  const help: number[] = [];
  const empty: number[] = [];
  const tsx: number[] = [];
  for (let i = 0; i < REPS; i++) {
    empty.push(wall(["-e", ""]));
    help.push(wall([HONE, "--help"]));
    if (i < 3) tsx.push(wall([HONE, "--help"], { HONE_FROM_SOURCE: "1" }));
  }
  const setup: number[] = [];
  const firstLine: number[] = [];
  const dir = mkdtempSync(join(tmpdir(), "hone-bench-startup-"));
  for (let i = 0; i < Math.ceil(REPS / 2); i++) {
    const out = execFileSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "peers", "setup-once.ts")]);
    setup.push((JSON.parse(out.toString().trim().split("\n").pop() ?? "{}") as { setupMs: number }).setupMs / 1000);
    firstLine.push(await untilFirstLine(join(dir, `run-${i}`)));
  }
  rmSync(dir, { recursive: true, force: true });
  return report(
    `start-up (issue 19): whole processes, ${REPS} repetitions; hone runs ${bundled ? "its bundle (dist/, fresh)" : "from the sources through tsx (no fresh dist/: npm run build:cli)"}`,
    [
      ['node -e ""', spread(empty, " s", 3)],
      ["hone --help", spread(help, " s", 3)],
      // On a loaded machine every process start is slower; this ratio is the figure the load changes least.
      [
        'hone --help / node -e "" (same repetition)',
        spread(
          help.map((x, i) => x / (empty[i] as number)),
          "x",
          2,
        ),
      ],
      ["hone --help through tsx (the sources)", spread(tsx, " s", 3)],
      ["set-up before round 0, in-process (optimize() to its start)", spread(setup, " s", 3)],
      ["hone optimize, spawn to its first line", spread(firstLine, " s", 3)],
    ],
    [
      { goal: { figure: "hone --help, wall", op: "<=", value: 0.25, unit: " s" }, samples: help },
      { goal: { figure: "set-up before round 0", op: "<=", value: 0.3, unit: " s" }, samples: setup },
    ],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStartup();
