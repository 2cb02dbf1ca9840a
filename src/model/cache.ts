import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Statement } from "better-sqlite3";
import { type Db, openRecordDb } from "../store/db.ts";
import { ModelError } from "./errors.ts";
import type { ChatModel, ChatRequest, ChatResponse } from "./types.ts";

/**
 * off: no cache. read-write (default): reuse identical requests, record new ones. replay: every request must be
 * recorded already (a pure re-run; a miss is an error, and no endpoint is ever called).
 */
export type CacheMode = "off" | "read-write" | "replay";

/** One SQLite table of responses by request key. First write wins; a corrupt entry reads as a miss. */
export class ResponseStore {
  private readonly db: Db;
  private readonly select: Statement;
  private readonly insert: Statement;
  private readonly remove: Statement;
  constructor(path: string) {
    this.db = openRecordDb(
      path,
      "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, response TEXT NOT NULL, created_at TEXT NOT NULL)",
    );
    this.select = this.db.prepare("SELECT response FROM responses WHERE key = ?");
    this.insert = this.db.prepare("INSERT OR IGNORE INTO responses (key, model, response, created_at) VALUES (?, ?, ?, ?)");
    this.remove = this.db.prepare("DELETE FROM responses WHERE key = ?");
  }
  get(key: string): ChatResponse | undefined {
    const row = this.select.get(key) as { response: string } | undefined;
    if (!row) return undefined;
    try {
      const r = JSON.parse(row.response) as ChatResponse;
      if (!r?.message || !Array.isArray(r.message.tool_calls)) throw new Error("shape");
      return r;
    } catch {
      this.remove.run(key);
      return undefined;
    }
  }
  put(key: string, model: string, response: ChatResponse): void {
    this.insert.run(key, model, JSON.stringify(response), new Date().toISOString());
  }
  stats(): { entries: number; bytes: number; oldest: string | null; newest: string | null } {
    return this.db
      .prepare(
        "SELECT COUNT(*) AS entries, COALESCE(SUM(LENGTH(response)), 0) AS bytes, MIN(created_at) AS oldest, MAX(created_at) AS newest FROM responses",
      )
      .get() as { entries: number; bytes: number; oldest: string | null; newest: string | null };
  }
  clear(olderThanMs?: number): number {
    if (olderThanMs === undefined) return this.db.prepare("DELETE FROM responses").run().changes;
    return this.db.prepare("DELETE FROM responses WHERE created_at < ?").run(new Date(Date.now() - olderThanMs).toISOString())
      .changes;
  }
  close(): void {
    this.db.close();
  }
}

export function defaultCachePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.HONE_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "hone"), "requests.db");
}

/**
 * The cache key: sha256 over the exact body as sent (model, messages, tools, every sampling field, seed) and the
 * trial index. The body is serialised as the wire serialises it: its key order is fixed by the code that builds it.
 */
export function requestKey(model: ChatModel, request: ChatRequest): string {
  const body = model.wireBody ? model.wireBody(request) : request;
  return createHash("sha256")
    .update(JSON.stringify(body))
    .update(`\0trial=${request.trial ?? 0}`)
    .digest("hex");
}

export interface CacheOptions {
  mode: CacheMode;
  /** Stores looked up, in order (the run's own calls, a recorded run being replayed, the shared cache). */
  read: ResponseStore[];
  /** Stores every new response goes to (the run's own calls always; the shared cache unless off). */
  write: ResponseStore[];
}

/**
 * The request cache as a wrapper around any ChatModel. Errors are never cached; hits come back flagged
 * `cached: true` with zero latency and no retries, so latency statistics and fault counts leave them out.
 */
export function withCache(model: ChatModel, o: CacheOptions): ChatModel {
  return {
    id: model.id,
    wireBody: model.wireBody?.bind(model),
    async complete(request, signal) {
      const key = requestKey(model, request);
      if (o.mode !== "off") {
        for (const s of o.read) {
          const hit = s.get(key);
          if (hit) {
            for (const w of o.write) if (w !== s) w.put(key, model.id, hit);
            return { ...hit, cached: true, latency_ms: 0, attempts: 0 };
          }
        }
      }
      if (o.mode === "replay")
        throw new ModelError(
          "replay_miss",
          `replay: this request was never recorded (key ${key.slice(0, 16)}…); the run cannot be replayed exactly from its records`,
          { url: model.id },
        );
      const response = await model.complete(request, signal);
      const { cached: _c, faults: _f, ...toStore } = response;
      for (const s of o.write) s.put(key, model.id, toStore);
      return response;
    },
  };
}
