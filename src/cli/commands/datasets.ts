import { resolve } from "node:path";
import type { Command } from "commander";
import { printJson, table } from "../output.ts";

const DATA_DIR_HELP = "where datasets live (default HONE_DATA_DIR or ~/.cache/hone/datasets)";

// The benchmark registry (every loader and scorer) loads only when a datasets command runs, not for `hone --help`.
export function registerDatasets(program: Command): void {
  const datasets = program
    .command("datasets")
    .description("every benchmark: splits, size, metrics, licence, and whether it is fetched")
    .option("--data-dir <dir>", DATA_DIR_HELP)
    .option("--json", "print the list as JSON")
    .action(async (opts) => {
      const { BENCHMARKS, dataDir, describe } = await import("./datasets-list.ts");
      const root = opts.dataDir ? resolve(opts.dataDir) : dataDir();
      const rows = Object.keys(BENCHMARKS).map((id) => describe(id, root));
      if (opts.json) return printJson(rows);
      const size = (s: Record<string, number | undefined>) =>
        Object.entries(s)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ");
      const body = rows.map((r) => [
        r.id,
        r.splits.join("/"),
        size(r.sizes),
        r.metrics.join(", "),
        r.licence,
        r.fetched ? "yes" : r.pinned ? "no" : "no (unpinned)",
      ]);
      process.stdout.write(
        `${table(["benchmark", "splits", "size", "metrics", "licence", "fetched"], body)}\n\ndata folder: ${root}\n`,
      );
    });
  datasets
    .command("fetch <id>")
    .description("download a benchmark from its canonical source (pinned commit or release) with a sha256 check per file")
    .option("--data-dir <dir>", DATA_DIR_HELP)
    .option("--base-url <url>", "download <base-url>/<file> instead of the canonical source (a mirror)")
    .option("--record", "for files hone has no sha256 for: take them as served and record their sha256 in <id>/SHA256SUMS")
    .action(async (id: string, _opts, cmd: Command) => {
      // --data-dir may land on `datasets` or on `fetch`, depending on where it is written.
      const opts = cmd.optsWithGlobals();
      const { explainFetchFailure, fetchDataset } = await import("./datasets-list.ts");
      const dir = await fetchDataset(id, {
        dir: opts.dataDir ? resolve(opts.dataDir) : undefined,
        baseUrl: opts.baseUrl,
        record: opts.record,
      }).catch((err) => {
        throw explainFetchFailure(err, id, opts.baseUrl);
      });
      process.stdout.write(`${id}: downloaded and verified into ${dir}\n`);
    });
}
