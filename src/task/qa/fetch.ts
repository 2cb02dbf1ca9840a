import { createHash } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { HoneError } from "../../errors.ts";
import { withoutPassword } from "../../secret-url.ts";
import type { BenchmarkDef, DatasetFile } from "./benchmark.ts";
import { readDataFile } from "./readers.ts";

/** A download larger than this, or silent for this long, is abandoned. */
const MAX_BYTES = 4 * 1024 ** 3;
const STALL_MS = 60_000;

/** The sha256 a user recorded for an unpinned file (`--record`), from `<id>/SHA256SUMS`. */
function recorded(dir: string, name: string, id: string): string | undefined {
  const sums = join(dir, "SHA256SUMS");
  if (!existsSync(sums)) return undefined;
  const role = {
    what: "the list of recorded sha256s",
    remedy: `remove it, then run \`hone datasets fetch ${id} --record\` to record them again`,
  };
  const line = readDataFile(sums, role)
    .toString("utf8")
    .split("\n")
    .find((l) => l.endsWith(`  ${name}`));
  return line?.slice(0, 64);
}

async function download(url: string, to: string, f: DatasetFile): Promise<string> {
  const abort = new AbortController();
  let timer = setTimeout(() => abort.abort(), STALL_MS);
  const hash = createHash("sha256");
  let bytes = 0;
  try {
    const res = await fetch(url, { signal: abort.signal, redirect: "follow" });
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    const limit = f.bytes ?? MAX_BYTES;
    const counted = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream).map((chunk: Buffer) => {
      clearTimeout(timer);
      timer = setTimeout(() => abort.abort(), STALL_MS);
      bytes += chunk.length;
      if (bytes > limit) throw new Error(`more than the expected ${limit} bytes`);
      hash.update(chunk);
      return chunk;
    });
    await pipeline(counted, createWriteStream(to));
    return hash.digest("hex");
  } catch (err) {
    throw new HoneError(
      "endpoint",
      `cannot download ${withoutPassword(url)}: ${abort.signal.aborted ? `no data for ${STALL_MS / 1000} s` : (err as Error).message}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

/** Transient failures (a reset or reused connection, a stall) are tried again; an HTTP status or a size overrun is not. */
async function downloadRetrying(url: string, to: string, f: DatasetFile, attempts = 3): Promise<string> {
  for (let i = 1; ; i++) {
    try {
      return await download(url, to, f);
    } catch (err) {
      const permanent = /HTTP \d{3}|more than the expected/.test((err as Error).message);
      if (permanent || i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 200 * i));
    }
  }
}

/**
 * `hone datasets fetch`: downloads every file of a benchmark from its canonical source (or `<baseUrl>/<name>`)
 * into a staging folder, checks each sha256, and only then moves them into `<dir>/<id>/`. A mismatch, a failed
 * download or an unpinned file leaves nothing behind. `record` accepts unpinned files as served and writes their
 * sha256 to `<id>/SHA256SUMS`, which later fetches then check.
 */
export async function fetchBenchmark(
  b: BenchmarkDef,
  root: string,
  opts: { baseUrl?: string; record?: boolean } = {},
): Promise<string> {
  const dest = join(root, b.id);
  // A file published inside an archive ("<archive URL>#<member>"): hone does not unpack archives, and saving the
  // archive under the member's name would leave a file no loader can read.
  const inArchive = opts.baseUrl ? [] : b.files.filter((f) => f.url.includes("#"));
  if (inArchive.length)
    throw new HoneError(
      "usage",
      `${b.id}: ${inArchive.map((f) => `${f.name} is ${f.url.slice(f.url.indexOf("#") + 1)} inside ${f.url.replace(/#.*$/, "")}`).join("; ")}. hone does not unpack archives: download and extract ${inArchive.length > 1 ? "them" : "it"} into ${dest}/ yourself, or give --base-url of a mirror that serves ${inArchive.map((f) => f.name).join(", ")} by name.`,
    );
  const unpinned = b.files.filter((f) => !f.sha256 && !recorded(dest, f.name, b.id));
  if (unpinned.length && !opts.record)
    throw new HoneError(
      "usage",
      `${b.id}: hone has no verified sha256 for ${unpinned.map((f) => f.name).join(", ")} (published at ${unpinned.map((f) => f.url).join(", ")}). Place the files in ${dest}/ yourself, or run \`hone datasets fetch ${b.id} --record\` to take them as served and record their sha256 in ${dest}/SHA256SUMS.`,
    );
  mkdirSync(root, { recursive: true });
  const staging = mkdtempSync(join(root, `.${b.id}.partial-`));
  try {
    const sums: string[] = [];
    for (const f of b.files) {
      const url = opts.baseUrl ? `${opts.baseUrl.replace(/\/$/, "")}/${f.name}` : f.url.replace(/#.*$/, "");
      const to = join(staging, f.name);
      mkdirSync(dirname(to), { recursive: true });
      const sha = await downloadRetrying(url, to, f);
      const expected = f.sha256 ?? recorded(dest, f.name, b.id);
      if (expected && sha !== expected)
        throw new HoneError(
          "badTask",
          `${withoutPassword(url)}: sha256 ${sha} does not match the expected ${expected}; nothing was saved`,
        );
      sums.push(`${sha}  ${f.name}`);
    }
    mkdirSync(dest, { recursive: true });
    for (const f of b.files) {
      mkdirSync(dirname(join(dest, f.name)), { recursive: true });
      renameSync(join(staging, f.name), join(dest, f.name));
    }
    if (opts.record) writeFileSync(join(dest, "SHA256SUMS"), `${sums.join("\n")}\n`);
    return dest;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
