import { type FSWatcher, statSync, watch } from "node:fs";
import { join } from "node:path";
import type { RunReader } from "./run-reader.ts";
import type { RunRegistry } from "./runs.ts";

type Listener = (fingerprint: string) => void;

/**
 * Files beside hone.db whose writing changes a run without a commit: `hone compare` writes a cell × seed's cell.json
 * after its run's last record. A change of one is a change of the run's fingerprint.
 */
const MARKS = ["cell.json"];

export interface LiveOptions {
  /** How often a watched run is checked even without a file event (network filesystems send none). */
  checkMs?: number;
  /** File events closer together than this are one check. */
  debounceMs?: number;
  /** A run's clients are told at most this often (each update makes every open page reload). */
  minGapMs?: number;
  /** How often the runs list looks for run directories that appeared or went away. */
  rescanMs?: number;
}

/**
 * One run directory followed for every client that watches it: a single file watcher on the folder (hone.db and
 * its WAL change on every commit), a slow check as a safety net, and SQLite's data_version before any query, so
 * the fingerprint is computed once per change, not once per client per tick, and at most once per `minGapMs`
 * (a run of 50,000 rollouts commits often, and every update reloads every open page). Started by the first
 * client, stopped with the last.
 */
class RunMonitor {
  private readonly listeners = new Set<Listener>();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private version: number | undefined;
  /** The reader the version belongs to: a run folder deleted and made again is a new database whose version may match. */
  private reader: RunReader | undefined;
  private marks = "";
  private checkedAt = 0;
  last: string | undefined;

  constructor(
    private readonly runs: RunRegistry,
    private readonly id: string,
    private readonly o: Required<LiveOptions>,
    private readonly counts: { watchers: number; fingerprints: number },
  ) {}

  get size(): number {
    return this.listeners.size;
  }

  add(listener: Listener): void {
    const first = this.listeners.size === 0;
    this.listeners.add(listener);
    if (first) this.start();
    else if (this.last !== undefined) listener(this.last);
  }

  remove(listener: Listener): void {
    this.listeners.delete(listener);
    if (this.listeners.size === 0) this.stop();
  }

  private start(): void {
    this.watchFolder();
    this.timer = setInterval(() => this.check(), this.o.checkMs);
    this.timer.unref();
    this.check();
  }

  /** Watches the run folder as it is now (again after it was deleted and made anew: the old watch sees nothing). */
  private watchFolder(): void {
    this.closeWatcher();
    const dir = this.runs.dir(this.id);
    if (dir)
      try {
        this.watcher = watch(dir, { persistent: false }, (_event, name) => {
          if (!name || String(name).startsWith("hone.db") || MARKS.includes(String(name))) this.soon();
        });
        this.watcher.on("error", () => this.closeWatcher());
        this.counts.watchers++;
      } catch {
        this.watcher = undefined; // no inotify here (or none left): the timer alone follows the run
      }
  }

  private closeWatcher(): void {
    if (!this.watcher) return;
    this.watcher.close();
    this.watcher = undefined;
    this.counts.watchers--;
  }

  stop(): void {
    this.listeners.clear();
    this.closeWatcher();
    clearInterval(this.timer);
    clearTimeout(this.pending);
    this.pending = undefined;
    this.version = undefined;
    this.reader = undefined;
    this.marks = "";
    this.last = undefined;
  }

  /** The mark files' sizes and times ("" while there are none). */
  private markState(): string {
    const dir = this.runs.dir(this.id);
    if (!dir) return "";
    return MARKS.map((f) => {
      const st = statSync(join(dir, f), { throwIfNoEntry: false });
      return st ? `${f}:${st.size}:${st.mtimeMs}` : "";
    }).join("|");
  }

  private soon(): void {
    if (this.pending) return;
    const wait = Math.max(this.o.debounceMs, this.checkedAt + this.o.minGapMs - Date.now());
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.check();
    }, wait);
    this.pending.unref();
  }

  /** Recomputes the fingerprint only when another process has committed since the last check. */
  check(): void {
    if (this.listeners.size === 0) return;
    this.checkedAt = Date.now();
    const reader = this.runs.reader(this.id);
    let now = "gone";
    if (reader !== this.reader) {
      // Gone, back, or replaced by another database under the same name: its version says nothing about the last one.
      if (reader && this.last !== undefined) this.watchFolder();
      this.reader = reader;
      this.version = undefined;
    }
    if (reader)
      try {
        const version = reader.version();
        const marks = this.markState();
        if (version === this.version && marks === this.marks && this.last !== undefined) return;
        this.version = version;
        this.marks = marks;
        this.counts.fingerprints++;
        now = `${reader.fingerprint()}${marks ? `|${marks}` : ""}`;
      } catch {
        // A hone.db that SQLite stopped being able to read (overwritten in place): said as such, and checked again
        // at the next change; thrown from a timer, it would stop the console.
        this.version = undefined;
        now = "unreadable";
      }
    if (now === this.last) return;
    this.last = now;
    for (const l of this.listeners) l(now);
  }
}

/** Every live page's source of updates: a RunMonitor per watched run, and the runs list built on them. */
export class LiveHub {
  private readonly monitors = new Map<string, RunMonitor>();
  private readonly listListeners = new Set<Listener>();
  /** The runs the list follows, each with its unsubscribe. */
  private readonly listFollows = new Map<string, () => void>();
  private listTimer: NodeJS.Timeout | undefined;
  private listLast: string | undefined;
  private readonly o: Required<LiveOptions>;
  private readonly counts = { watchers: 0, fingerprints: 0 };

  constructor(
    private readonly runs: RunRegistry,
    o: LiveOptions = {},
  ) {
    this.o = {
      checkMs: o.checkMs ?? 2000,
      debounceMs: o.debounceMs ?? 50,
      minGapMs: o.minGapMs ?? 1000,
      rescanMs: o.rescanMs ?? 2000,
    };
  }

  /** Calls `listener` with the run's fingerprint now and whenever it changes; returns the unsubscribe. */
  watchRun(id: string, listener: Listener): () => void {
    let m = this.monitors.get(id);
    if (!m) {
      m = new RunMonitor(this.runs, id, this.o, this.counts);
      this.monitors.set(id, m);
    }
    m.add(listener);
    const monitor = m;
    return () => {
      monitor.remove(listener);
      if (monitor.size === 0) this.monitors.delete(id);
    };
  }

  /** The same for the runs list: it changes when any run changes or a run directory appears or goes away. */
  watchList(listener: Listener): () => void {
    if (this.listListeners.size === 0) {
      this.listTimer = setInterval(() => this.followRuns(), this.o.rescanMs);
      this.listTimer.unref();
    }
    this.listListeners.add(listener);
    this.followRuns();
    if (this.listLast !== undefined) listener(this.listLast);
    return () => {
      this.listListeners.delete(listener);
      if (this.listListeners.size > 0) return;
      clearInterval(this.listTimer);
      for (const unfollow of this.listFollows.values()) unfollow();
      this.listFollows.clear();
      this.listLast = undefined;
    };
  }

  private followRuns(): void {
    const ids = this.runs.ids();
    const present = new Set(ids);
    for (const [id, unfollow] of this.listFollows)
      if (!present.has(id)) {
        unfollow();
        this.listFollows.delete(id);
      }
    for (const id of ids)
      if (!this.listFollows.has(id))
        this.listFollows.set(
          id,
          this.watchRun(id, () => this.listChanged()),
        );
    this.listChanged();
  }

  private listChanged(): void {
    if (this.listListeners.size === 0) return;
    const now = JSON.stringify([...this.listFollows.keys()].map((id) => [id, this.monitors.get(id)?.last]));
    if (now === this.listLast) return;
    this.listLast = now;
    for (const l of this.listListeners) l(now);
  }

  /** For tests and the benchmark: file watchers open, fingerprints computed so far, runs followed. */
  stats(): { watchers: number; fingerprints: number; runs: number } {
    return { ...this.counts, runs: this.monitors.size };
  }

  close(): void {
    for (const m of this.monitors.values()) m.stop();
    this.monitors.clear();
    clearInterval(this.listTimer);
    this.listListeners.clear();
    this.listFollows.clear();
  }
}
