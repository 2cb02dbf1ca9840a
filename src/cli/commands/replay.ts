import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import { compareRecords } from "../../loop/compare-runs.ts";
import { type OptimizeSettings, optimize } from "../../loop/optimize.ts";
import { defaultCachePath, ResponseStore } from "../../model/cache.ts";
import { openDb } from "../../store/db.ts";
import { isTty, printJson } from "../output.ts";
import { OptimizeProgress } from "../progress.ts";

function parseAge(text: string): number {
  const m = /^(\d+)\s*(s|m|h|d)$/.exec(text.trim());
  if (!m) throw new HoneError("usage", `--older-than takes a number and a unit (s, m, h, d), like 14d; got "${text}"`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
}

/** Where a replay goes: --out (which must not hold anything yet), else the first free <run-dir>-replay[-N]. */
function replayDir(dir: string, out: string | undefined): string {
  const taken = (d: string) => existsSync(d) && readdirSync(d).length > 0;
  if (out) {
    if (taken(resolve(out)))
      throw new HoneError(
        "usage",
        `${resolve(out)} already exists and is not empty; a replay needs a new folder: choose another --out`,
      );
    return resolve(out);
  }
  for (let n = 1; ; n++) {
    const d = `${dir}-replay${n === 1 ? "" : `-${n}`}`;
    if (!taken(d)) return d;
  }
}

export function registerReplay(program: Command): void {
  program
    .command("replay <run-dir>")
    .description(
      "re-run a finished optimize run from its recorded model calls and evaluations, with no endpoint, and check every record matches",
    )
    .option("--out <dir>", "a new folder for the replay (default <run-dir>-replay, then -replay-2, …)")
    .option("--json", "print the comparison as JSON")
    .action(async (dirArg: string, opts) => {
      const dir = resolve(dirArg);
      if (!existsSync(join(dir, "hone.db"))) throw new HoneError("usage", `${dir} is not a run directory (no hone.db)`);
      const db = openDb(join(dir, "hone.db"), { readonly: true });
      const row = db.prepare("SELECT config, status FROM runs WHERE id = 'run'").get() as
        | { config: string; status: string }
        | undefined;
      db.close();
      if (!row) throw new HoneError("usage", `${dir} holds no run`);
      if (row.status !== "finished")
        throw new HoneError("usage", `${dir} has not finished; resume it first (hone optimize --resume ${dirArg})`);
      const settings: OptimizeSettings = { ...JSON.parse(row.config), cache: { mode: "replay" }, replayOf: dir };
      const out = replayDir(dir, opts.out);
      const progress = opts.json ? undefined : new OptimizeProgress(isTty());
      const started = performance.now();
      await optimize(settings, { outDir: out, onEvent: (e) => progress?.on(e) });
      progress?.end();
      const seconds = (performance.now() - started) / 1000;
      const a = openDb(join(dir, "hone.db"), { readonly: true });
      const b = openDb(join(out, "hone.db"), { readonly: true });
      const { counts, differences } = compareRecords(a, b);
      a.close();
      b.close();
      if (opts.json) printJson({ source: dir, replay: out, seconds, matches: differences.length === 0, counts, differences });
      else if (differences.length === 0) {
        process.stdout.write(
          `replay matches ${dir} exactly: ${counts.rounds} rounds, ${counts.candidates} candidates, ${counts.rollouts} rollouts, ${counts.evaluations} evaluations (${seconds.toFixed(1)} s, written to ${out})\n`,
        );
      } else
        process.stdout.write(
          `replay DIFFERS from ${dir} in ${differences.length} field(s):\n  ${differences.slice(0, 40).join("\n  ")}\n`,
        );
      process.exitCode = differences.length === 0 ? ExitCode.ok : ExitCode.runFailed;
    });

  const cache = program.command("cache").description("the shared request cache");
  cache
    .command("stats")
    .option("--cache-dir <dir>", "cache folder (default HONE_CACHE_DIR or ~/.cache/hone)")
    .option("--json", "print as JSON")
    .action((opts) => {
      const path = opts.cacheDir ? join(opts.cacheDir, "requests.db") : defaultCachePath();
      const store = new ResponseStore(path);
      const s = store.stats();
      store.close();
      if (opts.json) printJson({ path, ...s });
      else
        process.stdout.write(
          `${path}\n  ${s.entries} responses, ${(s.bytes / 1024).toFixed(0)} KiB${s.oldest ? `, ${s.oldest} … ${s.newest}` : ""}\n`,
        );
    });
  cache
    .command("clear")
    .option("--older-than <age>", "only entries older than this (like 14d, 12h)")
    .option("--cache-dir <dir>", "cache folder (default HONE_CACHE_DIR or ~/.cache/hone)")
    .action((opts) => {
      const path = opts.cacheDir ? join(opts.cacheDir, "requests.db") : defaultCachePath();
      const store = new ResponseStore(path);
      const n = store.clear(opts.olderThan ? parseAge(opts.olderThan) : undefined);
      store.close();
      process.stdout.write(`removed ${n} cached response(s) from ${path}\n`);
    });
}
