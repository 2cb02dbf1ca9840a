import { closeSync, constants, fstatSync, openSync, readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import { gunzipSync } from "node:zlib";
import { HoneError } from "../../errors.ts";

/** Dataset files are read whole; one larger than this is refused rather than filling memory. */
const MAX_BYTES = 2 * 1024 ** 3;

export type Row = Record<string, unknown>;

const KINDS: [string, (s: import("node:fs").Stats) => boolean][] = [
  ["a directory", (s) => s.isDirectory()],
  ["a FIFO", (s) => s.isFIFO()],
  ["a socket", (s) => s.isSocket()],
  ["a device", (s) => s.isCharacterDevice() || s.isBlockDevice()],
];

/** What a file read is, and what its refusal tells the user to do: by default a dataset file. */
export interface FileRole {
  /** "a dataset file", as in "x is a FIFO, not a dataset file". */
  what: string;
  /** What to do instead, after the semicolon. */
  remedy: string;
}
const DATASET_FILE: FileRole = { what: "a dataset file", remedy: "put the downloaded file there (hone datasets fetch)" };

/** Refuses anything but a regular file (a symlink counts as what it points to), within hone's size limit. */
function checkRegular(file: string, st: import("node:fs").Stats, role: FileRole = DATASET_FILE): void {
  if (!st.isFile()) {
    const kind = KINDS.find(([, is]) => is(st))?.[0] ?? "not a regular file";
    throw new HoneError("badTask", `${file} is ${kind}, not ${role.what}; ${role.remedy}`);
  }
  if (st.size > MAX_BYTES) throw new HoneError("badTask", `${file} is ${st.size} bytes, more than hone reads (${MAX_BYTES})`);
}

/**
 * The bytes of a dataset file (or of another file hone datasets keeps, `role` saying what it is and what to do when
 * it is not a file). Opened without blocking (a FIFO would wait for a writer forever, /dev/zero never ends) and
 * checked on the open descriptor, so only a regular file is read.
 */
export function readDataFile(file: string, role: FileRole = DATASET_FILE): Buffer {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new HoneError("badTask", `${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    checkRegular(file, fstatSync(fd), role);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

function bytesOf(file: string): Buffer {
  const raw = readDataFile(file);
  return file.endsWith(".gz") ? gunzipSync(raw, { maxOutputLength: MAX_BYTES }) : raw;
}

/** UTF-8 text of `bytes`, or a clear refusal when it is longer than a JavaScript string can hold. */
function textOf(bytes: Buffer, where: string): string {
  try {
    return bytes.toString("utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_STRING_TOO_LONG") throw err;
    throw new HoneError("badTask", `${where}: ${bytes.length} bytes in one JSON text, more than hone reads as one string`);
  }
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
  const bytes = bytesOf(file);
  // Line by line from the bytes: a file larger than one JavaScript string still reads, a huge line is named.
  for (let start = 0, n = 1; start < bytes.length; n++) {
    const nl = bytes.indexOf(10, start);
    const end = nl < 0 ? bytes.length : nl;
    const line = textOf(bytes.subarray(start, end), `${file}:${n}`);
    start = end + 1;
    if (!line.trim()) continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw parseError(file, `:${n}`, err);
    }
    rows.push(asRow(v, `${file}:${n}`));
  }
  return rows;
}

/** A JSON document (optionally .gz). */
export function readJson(file: string): unknown {
  try {
    return JSON.parse(textOf(bytesOf(file), file));
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
  let st: import("node:fs").Stats;
  try {
    st = statSync(file);
  } catch (err) {
    throw new HoneError("badTask", `${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  checkRegular(file, st);
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
