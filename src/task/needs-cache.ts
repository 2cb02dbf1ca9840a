// What a task needs, kept on disk between processes: the scan (needs.ts) costs a Python start beside every run's
// set-up (~0.1 s of CPU), while its answer changes only when a file it read or a folder it searched does. An entry is
// keyed by the interpreter's executable, the scan's request, the scan's own code, PATH and the working folder, and holds
// the size, inode and times of the executable, every file the scan considered and every folder on the path it
// searched (a module installed, removed or written there changes its folder's time); any difference is a miss. A
// cached answer only ever lets a task run: needs.ts scans afresh before it refuses one, so what these stamps cannot
// see (a .pth edited in place, a link's target appearing) never keeps a task from running.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeJsonAtomic } from "../store/atomic.ts";
import { honeCacheDir } from "../store/cache-dir.ts";

/** What the scan prints: modules missing and present (with where they are imported), and what it looked at. */
export interface ScanAnswer {
  missing: Record<string, [string, number][]>;
  present: string[];
  /** Every file the scan considered (parsed or not). */
  files: string[];
  /** The folders it searched for modules (sys.path as the scan had it). */
  path: string[];
}

const MAX_ENTRY_BYTES = 1 << 20;
const MAX_STAMPED = 2000;
const MAX_ENTRIES = 256;
const CHANGED_MARGIN_MS = 3000;

/**
 * A path's identity as an entry keeps it: kind, size, inode, and both times (ctime, which `touch -r` or `cp -p` cannot
 * set back); `-` when absent, `!code` when it cannot be looked at. `time` is its modification time.
 */
function stampOf(p: string): { stamp: string; time: number } {
  try {
    const s = statSync(p, { throwIfNoEntry: false });
    if (!s) return { stamp: "-", time: 0 };
    const kind = s.isDirectory() ? "d" : "f";
    return { stamp: `${kind}:${s.size}:${s.ino}:${s.mtimeMs}:${s.ctimeMs}`, time: s.mtimeMs };
  } catch (err) {
    return { stamp: `!${(err as NodeJS.ErrnoException).code ?? "error"}`, time: 0 }; // a file as a folder, a loop
  }
}

/** Each file's and folder's stamp, and the latest time among them. */
function stamps(executable: string, answer: ScanAnswer): { stamps: Record<string, string>; latest: number } | undefined {
  const paths = [executable, ...answer.files, ...answer.path];
  if (paths.length > MAX_STAMPED) return undefined; // a scan this wide is cheaper to run again than to check
  let latest = 0;
  const out: Record<string, string> = {};
  for (const p of paths) {
    const { stamp, time } = stampOf(p);
    out[p] = stamp;
    latest = Math.max(latest, time);
  }
  return { stamps: out, latest };
}

function entryFile(key: string): string {
  return join(honeCacheDir(), "needs", `${createHash("sha256").update(key).digest("hex").slice(0, 32)}.json`);
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
const isRefs = (v: unknown) =>
  Array.isArray(v) && v.every((r) => Array.isArray(r) && typeof r[0] === "string" && typeof r[1] === "number");
/** An answer as the scan prints it (an entry of another shape, or edited, is a miss). */
const isAnswer = (v: unknown): v is ScanAnswer => {
  const a = v as Partial<ScanAnswer> | null;
  const missing = a?.missing;
  if (typeof missing !== "object" || missing === null || Array.isArray(missing)) return false;
  return Object.values(missing).every(isRefs) && isStrings(a?.present) && isStrings(a?.files) && isStrings(a?.path);
};

/** The cached answer for `key`, when every file and folder it depends on is as it was. */
export function readCachedNeeds(key: string): ScanAnswer | undefined {
  const file = entryFile(key);
  try {
    if ((statSync(file, { throwIfNoEntry: false })?.size ?? Number.POSITIVE_INFINITY) > MAX_ENTRY_BYTES) return undefined;
    const entry = JSON.parse(readFileSync(file, "utf8")) as {
      key?: unknown;
      executable?: unknown;
      answer?: unknown;
      stamps?: unknown;
    };
    if (entry.key !== key || typeof entry.executable !== "string" || !isAnswer(entry.answer)) return undefined;
    const now = stamps(entry.executable, entry.answer);
    return now && JSON.stringify(now.stamps) === JSON.stringify(entry.stamps) ? entry.answer : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keeps a scan's answer for the next process (a cache that cannot be written is only slower); not when something it
 * depends on changed from a few seconds before the scan began (`startedAt`, ms since the epoch; the margin covers a
 * file system's coarse times or a server's clock behind this one): then the answer may describe either state.
 */
export function writeCachedNeeds(key: string, executable: string, answer: ScanAnswer, startedAt: number): void {
  try {
    const now = stamps(executable, answer);
    if (!now || now.latest >= startedAt - CHANGED_MARGIN_MS) return;
    writeJsonAtomic(entryFile(key), { key, executable, answer, stamps: now.stamps });
    prune(dirname(entryFile(key)));
  } catch {
    // read-only home or full disk: every run scans afresh
  }
}

/** Keeps the folder to its newest MAX_ENTRIES entries (every task folder, working folder and PATH makes one). */
function prune(dir: string): void {
  const names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  if (names.length <= MAX_ENTRIES) return;
  const dated = names.map((n) => ({ n, t: statSync(join(dir, n), { throwIfNoEntry: false })?.mtimeMs ?? 0 }));
  dated.sort((a, b) => b.t - a.t);
  for (const { n } of dated.slice(MAX_ENTRIES)) rmSync(join(dir, n), { force: true });
}
