import { join } from "node:path";
import { dbFilesRegular } from "./files.ts";
import { findRunDirs, runId } from "./run-index.ts";
import { RunReader } from "./run-reader.ts";

/** How many runs keep their computed pages (a curve of 50,000 candidates is a few MB of JSON). */
const KEEP_COMPUTED = 8;

/** The run directories under the console's root, rescanned at most every `rescanMs` so new runs appear live. */
export class RunRegistry {
  private dirs = new Map<string, string>();
  private readers = new Map<string, { reader: RunReader; ino: number }>();
  /** Run ids by last use, most recent last: only the few most recent keep what they computed. */
  private recent: string[] = [];
  private scannedAt = 0;

  constructor(
    readonly root: string,
    private readonly rescanMs = 2000,
  ) {}

  ids(): string[] {
    this.rescan();
    return [...this.dirs.keys()];
  }

  dir(id: string): string | undefined {
    this.rescan();
    if (!this.dirs.has(id)) this.rescan(true);
    return this.dirs.get(id);
  }

  /** A reader for a run id from a URL; ids are looked up, never used as paths. */
  reader(id: string): RunReader | undefined {
    const dir = this.dir(id);
    if (!dir) return undefined;
    // Never opened unless hone.db and its WAL files are regular files: SQLite would block on a FIFO.
    const ino = dbFilesRegular(join(dir, "hone.db"));
    if (ino === null) return undefined;
    this.used(id);
    const known = this.readers.get(id);
    // A run folder deleted and made again under the same name is a different run: reopen it.
    if (known && known.ino === ino) return known.reader;
    known?.reader.close();
    this.readers.delete(id);
    let reader: RunReader;
    try {
      reader = new RunReader(dir);
    } catch {
      return undefined; // a hone.db being created right now
    }
    // A file named hone.db that SQLite cannot read, or another program's database: listed as unreadable, never a
    // query that throws (from a live page's timer, that would stop the console).
    if (!reader.readable()) {
      reader.close();
      return undefined;
    }
    this.readers.set(id, { reader, ino });
    return reader;
  }

  private used(id: string): void {
    this.recent = [...this.recent.filter((x) => x !== id), id];
    if (this.recent.length <= KEEP_COMPUTED) return;
    const oldest = this.recent.shift() as string;
    this.readers.get(oldest)?.reader.forget();
  }

  close(): void {
    for (const r of this.readers.values()) r.reader.close();
    this.readers.clear();
  }

  private rescan(force = false): void {
    if (!force && Date.now() - this.scannedAt < this.rescanMs) return;
    this.scannedAt = Date.now();
    this.dirs = new Map(findRunDirs(this.root).map((d) => [runId(this.root, d), d]));
    for (const [id, r] of this.readers)
      if (!this.dirs.has(id)) {
        r.reader.close();
        this.readers.delete(id);
      }
  }
}
