import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import { isTty, printJson } from "../output.ts";
import { OptimizeProgress } from "../progress.ts";
import { atExit, atStop } from "../shutdown.ts";

function parseAge(text: string): number {
  const m = /^(\d+)\s*(s|m|h|d)$/.exec(text.trim());
  if (!m) throw new HoneError("usage", `--older-than takes a number and a unit (s, m, h, d), like 14d; got "${text}"`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
}

export function registerReplay(program: Command): void {
  program
    .command("replay <run-dir>")
    .description(
      "re-run a finished run (optimize, train, eval or run) from its recorded model calls and evaluations, with no endpoint, and check every record matches",
    )
    .option("--out <dir>", "a new folder for the replay (default <run-dir>-replay, then -replay-2, …)")
    .option("--json", "print the comparison as JSON")
    .action(async (dirArg: string, opts) => {
      const { replayRun } = await import("../../loop/replay.ts");
      const progress = opts.json ? undefined : new OptimizeProgress(isTty());
      // Stopped, a replay leaves no folder: it is the run's again at any time, and half of one compares with nothing.
      let atStopOff = () => {};
      const r = await replayRun(
        dirArg,
        opts.out,
        (e) => progress?.on(e),
        (_dir, abandon) => {
          // Removed as the process exits: the replay, still going while the stop's other steps run, could write into a
          // folder removed sooner. Called again once the writer holds the folder, with what removes all it wrote.
          atStopOff();
          atStopOff = atStop(() => atExit(abandon));
        },
      ).finally(() => atStopOff());
      progress?.end();
      const { kind, source, replay, seconds, counts, differences } = r;
      if (opts.json) printJson({ kind, source, replay, seconds, matches: differences.length === 0, counts, differences });
      else if (differences.length === 0) {
        const what = Object.entries(counts)
          .filter(([, n]) => n > 0)
          .map(([t, n]) => `${n} ${t.replace("_", " ")}`)
          .join(", ");
        process.stdout.write(`replay matches ${source} exactly: ${what} (${seconds.toFixed(1)} s, written to ${replay})\n`);
      } else
        process.stdout.write(
          `replay DIFFERS from ${source} in ${differences.length} field(s):\n  ${differences.slice(0, 40).join("\n  ")}\n`,
        );
      process.exitCode = differences.length === 0 ? ExitCode.ok : ExitCode.runFailed;
    });

  const cache = program.command("cache").description("the shared request cache");
  cache
    .command("stats")
    .description("how many responses the shared request cache holds, their size and ages")
    .option("--cache-dir <dir>", "cache folder (default HONE_CACHE_DIR or ~/.cache/hone)")
    .option("--json", "print as JSON")
    .action(async (opts) => {
      const { defaultCachePath, ResponseStore } = await import("../../model/cache.ts");
      const path = opts.cacheDir ? join(opts.cacheDir, "requests.db") : defaultCachePath();
      // Looking makes nothing: a cache not there yet (or a mistyped --cache-dir) is empty, not created.
      const exists = existsSync(path);
      const s = exists ? readStats(new ResponseStore(path)) : { entries: 0, bytes: 0, oldest: null, newest: null };
      if (opts.json) printJson({ path, exists, ...s });
      else if (!exists)
        process.stdout.write(`${path}\n  no request cache here yet (a run with --cache read-write, the default, makes it)\n`);
      else
        process.stdout.write(
          `${path}\n  ${s.entries} responses, ${(s.bytes / 1024).toFixed(0)} KiB${s.oldest ? `, ${s.oldest} … ${s.newest}` : ""}\n`,
        );
    });
  cache
    .command("clear")
    .description("remove the shared request cache's responses (all, or those older than --older-than)")
    .option("--older-than <age>", "only entries older than this (like 14d, 12h)")
    .option("--cache-dir <dir>", "cache folder (default HONE_CACHE_DIR or ~/.cache/hone)")
    .action(async (opts) => {
      const { defaultCachePath, ResponseStore } = await import("../../model/cache.ts");
      const age = opts.olderThan === undefined ? undefined : parseAge(opts.olderThan);
      const path = opts.cacheDir ? join(opts.cacheDir, "requests.db") : defaultCachePath();
      if (!existsSync(path)) return void process.stdout.write(`removed 0 cached response(s): no request cache at ${path}\n`);
      const store = new ResponseStore(path);
      const n = (() => {
        try {
          return store.clear(age);
        } finally {
          store.close();
        }
      })();
      process.stdout.write(`removed ${n} cached response(s) from ${path}\n`);
    });
}

function readStats(store: import("../../model/cache.ts").ResponseStore) {
  try {
    return store.stats();
  } finally {
    store.close();
  }
}
