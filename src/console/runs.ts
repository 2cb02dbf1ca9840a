import { findRunDirs, runId } from "./run-index.ts";
import { RunReader } from "./run-reader.ts";

/** The run directories under the console's root, rescanned at most every `rescanMs` so new runs appear live. */
export class RunRegistry {
  private dirs = new Map<string, string>();
  private readers = new Map<string, RunReader>();
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
    let reader = this.readers.get(id);
    if (!reader) {
      try {
        reader = new RunReader(dir);
      } catch {
        return undefined; // a hone.db being created right now
      }
      this.readers.set(id, reader);
    }
    return reader;
  }

  close(): void {
    for (const r of this.readers.values()) r.close();
    this.readers.clear();
  }

  private rescan(force = false): void {
    if (!force && Date.now() - this.scannedAt < this.rescanMs) return;
    this.scannedAt = Date.now();
    this.dirs = new Map(findRunDirs(this.root).map((d) => [runId(this.root, d), d]));
  }
}
