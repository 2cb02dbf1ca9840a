import { constants, lstatSync, type Stats } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";

/** The most of one file the console reads for a request (an artifact, a program to diff). */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;

/** A file the console will not serve, with the HTTP status and a message naming it. */
export class Refused extends Error {
  constructor(
    readonly status: 400 | 404 | 413,
    message: string,
  ) {
    super(message);
  }
}

function kind(st: Stats): string {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "folder";
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isSymbolicLink()) return "symbolic link";
  return "device";
}

/**
 * Opens `path` for reading only if it is a regular file, and never blocks doing so: the path is lstat'ed first (a
 * FIFO, device, socket, folder or link is refused without being opened), opened with O_NOFOLLOW | O_NONBLOCK (a
 * FIFO swapped in since then opens at once instead of waiting for a writer), and fstat'ed on the descriptor.
 */
export async function openRegular(path: string, shown: string): Promise<{ fh: FileHandle; size: number }> {
  let st: Stats;
  try {
    st = await lstat(path);
  } catch {
    throw new Refused(404, `${shown} not found`);
  }
  if (!st.isFile()) throw new Refused(400, `${shown} is a ${kind(st)}; only regular files are served`);
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    throw new Refused(404, `${shown} could not be opened`);
  }
  const now = await fh.stat();
  if (!now.isFile()) {
    await fh.close();
    throw new Refused(400, `${shown} is a ${kind(now)}; only regular files are served`);
  }
  return { fh, size: now.size };
}

/** Whether `path` is a regular file itself (not a link to one). */
export function isRegularFile(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}

/**
 * The inode of a run's hone.db if it and its -wal and -shm files are regular files (those two may be absent),
 * else null: SQLite opening a FIFO put there would block the console for good.
 */
export function dbFilesRegular(db: string): number | null {
  try {
    const main = lstatSync(db);
    if (!main.isFile()) return null;
    for (const extra of [`${db}-wal`, `${db}-shm`]) {
      const st = lstatSync(extra, { throwIfNoEntry: false });
      if (st && !st.isFile()) return null;
    }
    return main.ino;
  } catch {
    return null;
  }
}

/** Reads at most `cap` bytes of a regular file; `size` is its whole size, `truncated` whether it was cut. */
export async function readHead(
  path: string,
  shown: string,
  cap = MAX_FILE_BYTES,
): Promise<{ bytes: Buffer; size: number; truncated: boolean }> {
  const { fh, size } = await openRegular(path, shown);
  try {
    const want = Math.min(size, cap);
    const bytes = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await fh.read(bytes, got, want - got, got);
      if (bytesRead === 0) break; // the file shrank since fstat
      got += bytesRead;
    }
    return { bytes: bytes.subarray(0, got), size, truncated: size > got };
  } finally {
    await fh.close();
  }
}

export interface LinePage {
  total: number;
  /** The lines from `offset`, at most `limit` of them and at most `maxBytes` in all (then fewer: page on). */
  lines: string[];
  /** Lines longer than `maxLine` bytes: their first 500 characters and their length. */
  cut: Map<number, number>;
}

const CHUNK = 1024 * 1024;

/**
 * Pages through a JSONL file in one linear pass with bounded memory: lines before `offset` are only counted, every
 * kept line is capped at `maxLine` bytes and the page at `maxBytes`, so a huge or hostile file cannot fill memory.
 */
export async function readLines(
  path: string,
  shown: string,
  o: { offset: number; limit: number; maxLine?: number; maxBytes?: number },
): Promise<LinePage> {
  const maxLine = o.maxLine ?? 1024 * 1024;
  const maxBytes = o.maxBytes ?? 8 * 1024 * 1024;
  const { fh } = await openRegular(path, shown);
  const lines: string[] = [];
  const cut = new Map<number, number>();
  let index = 0; // the line being read
  let current: Buffer[] = [];
  let currentBytes = 0;
  let kept = 0;
  let full = false;
  const keeping = () => !full && index >= o.offset && lines.length < o.limit;
  const endLine = () => {
    if (currentBytes > 0 || current.length) {
      if (keeping()) {
        const text = Buffer.concat(current).toString("utf8");
        if (currentBytes > maxLine) cut.set(lines.length, currentBytes);
        lines.push(currentBytes > maxLine ? text.slice(0, 500) : text);
        kept += Math.min(currentBytes, maxLine);
        if (kept >= maxBytes) full = true;
      }
      index++;
    }
    current = [];
    currentBytes = 0;
  };
  try {
    const buf = Buffer.alloc(CHUNK);
    let pos = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      let start = 0;
      while (start < bytesRead) {
        const nl = buf.indexOf(10, start);
        const end = nl === -1 || nl >= bytesRead ? bytesRead : nl;
        if (keeping() && currentBytes < maxLine)
          current.push(Buffer.from(buf.subarray(start, Math.min(end, start + maxLine - currentBytes))));
        currentBytes += end - start;
        if (end === bytesRead) break;
        endLine();
        start = end + 1;
      }
    }
    endLine();
  } finally {
    await fh.close();
  }
  return { total: index, lines, cut };
}
