import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import { gunzipSync } from "node:zlib";
import { HoneError } from "../../errors.ts";

/** Dataset files are read whole; one larger than this is refused rather than filling memory. */
const MAX_BYTES = 2 * 1024 ** 3;

export type Row = Record<string, unknown>;

function bytesOf(file: string): Buffer {
  const size = statSync(file).size;
  if (size > MAX_BYTES) throw new HoneError("badTask", `${file} is ${size} bytes, more than hone reads (${MAX_BYTES})`);
  const raw = readFileSync(file);
  return file.endsWith(".gz") ? gunzipSync(raw, { maxOutputLength: MAX_BYTES }) : raw;
}

const parseError = (file: string, where: string, err: unknown) =>
  new HoneError("badTask", `${file}${where}: not valid JSON (${(err as Error).message}); fetch it again`);

const kindOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v);

/** A row must be a JSON object: a `null`, array or scalar row is refused naming where it is. */
function asRow(v: unknown, where: string): Row {
  if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Row;
  throw new HoneError("badTask", `${where}: expected a JSON object, found ${kindOf(v)}; fetch it again`);
}

/** JSON Lines (optionally .gz): one object a line, blank lines skipped. */
export function readJsonl(file: string): Row[] {
  const rows: Row[] = [];
  bytesOf(file)
    .toString("utf8")
    .split("\n")
    .forEach((line, i) => {
      if (!line.trim()) return;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch (err) {
        throw parseError(file, `:${i + 1}`, err);
      }
      rows.push(asRow(v, `${file}:${i + 1}`));
    });
  return rows;
}

/** A JSON document (optionally .gz). */
export function readJson(file: string): unknown {
  try {
    return JSON.parse(bytesOf(file).toString("utf8"));
  } catch (err) {
    if (err instanceof HoneError) throw err;
    throw parseError(file, "", err);
  }
}

/** A JSON document whose top level is an array of objects. */
export function readJsonArray(file: string, key?: string): Row[] {
  const doc = readJson(file);
  const rows = key ? (doc as Record<string, unknown> | null)?.[key] : doc;
  if (!Array.isArray(rows)) throw new HoneError("badTask", `${basename(file)}: expected ${key ? `"${key}": ` : ""}a JSON array`);
  return rows.map((r, i) => asRow(r, `${basename(file)}${key ? ` ${key}` : ""}[${i}]`));
}

/** A Parquet file's rows as objects (hyparquet; snappy and uncompressed pages). */
export async function readParquet(file: string): Promise<Row[]> {
  // hyparquet loads with the first Parquet file read, not with every command that lists the benchmarks.
  const { asyncBufferFromFile, parquetReadObjects } = await import("hyparquet");
  try {
    return (await parquetReadObjects({ file: await asyncBufferFromFile(file) })) as Row[];
  } catch (err) {
    throw new HoneError("badTask", `${file}: not a readable Parquet file (${(err as Error).message}); fetch it again`);
  }
}

/** A string field of a row, or a clear error naming the file, row and field. */
export function field(row: Row, name: string, where: string): string {
  const v = row[name];
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  throw new HoneError("badTask", `${where}: field "${name}" is missing or not text`);
}

/** A non-empty list of accepted answers (text, or numbers written as text), or a clear error naming the row. */
export function answerList(list: unknown, where: string, name: string): string[] {
  if (Array.isArray(list) && list.length > 0 && list.every((a) => typeof a === "string" || typeof a === "number"))
    return list.map(String);
  throw new HoneError("badTask", `${where}: field "${name}" is not a non-empty list of answers`);
}
