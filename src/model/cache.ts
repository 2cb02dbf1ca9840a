import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Statement } from "better-sqlite3";
import { HoneError } from "../errors.ts";
import { honeCacheDir } from "../store/cache-dir.ts";
import { addRecordTable, type Db, hasTable, openDb, openRecordDb } from "../store/db.ts";
import { ModelError } from "./errors.ts";
import { RequestKeys } from "./request-keys.ts";
import type { ChatModel, ChatRequest, ChatResponse, ToolCall } from "./types.ts";

/**
 * off: no cache. read-write (default): reuse identical requests, record new ones. replay: every request must be
 * recorded already (a pure re-run; a miss is an error, and no endpoint is ever called).
 */
export type CacheMode = "off" | "read-write" | "replay";

const RESPONSES =
  "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, response TEXT NOT NULL, created_at TEXT NOT NULL)";

const isCount = (x: unknown) => typeof x === "number" && Number.isFinite(x) && x >= 0;
const isOptional = (x: unknown, test: (x: unknown) => boolean) => x === undefined || test(x);
const isString = (x: unknown) => typeof x === "string";

/** What is wrong with a recorded response, as the agent loop and the records read it; undefined when nothing is. */
export function responseFault(r: unknown): string | undefined {
  const v = r as Partial<ChatResponse> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "it is not an object";
  const m = v.message as Partial<ChatResponse["message"]> | undefined;
  if (typeof m !== "object" || m === null) return "message is not an object";
  if (!(m.content === null || isOptional(m.content, isString))) return "message.content is not text";
  for (const k of ["reasoning", "refusal"] as const) if (!isOptional(m[k], isString)) return `message.${k} is not text`;
  if (!Array.isArray(m.tool_calls)) return "message.tool_calls is not a list";
  for (const [i, c] of m.tool_calls.entries()) {
    const call = c as Partial<ToolCall> | null;
    if (
      typeof call !== "object" ||
      call === null ||
      !isString(call.id) ||
      typeof call.function !== "object" ||
      call.function === null ||
      !isString(call.function.name) ||
      !isString(call.function.arguments)
    )
      return `message.tool_calls[${i}] is not a call (id, function.name and function.arguments as text)`;
  }
  const u = v.usage as Partial<ChatResponse["usage"]> | undefined;
  if (typeof u !== "object" || u === null) return "usage is not an object";
  for (const k of ["prompt_tokens", "completion_tokens", "total_tokens"] as const)
    if (!isCount(u[k])) return `usage.${k} is not a count`;
  if (!isOptional(u.reasoning_tokens, isCount)) return "usage.reasoning_tokens is not a count";
  if (!isOptional(u.cached_tokens, isCount)) return "usage.cached_tokens is not a count";
  if (!isOptional(v.finish_reason, isString)) return "finish_reason is not text";
  for (const k of ["latency_ms", "attempts", "context_window"] as const)
    if (!isOptional(v[k], isCount)) return `${k} is not a number ≥ 0`;
  if (!isOptional(v.model, isString)) return "model is not text";
  if (!isOptional(v.faults, Array.isArray)) return "faults is not a list";
  return undefined;
}

/** Where a shared cache's trouble is told: once per store, on stderr unless the caller says otherwise. */
export type Say = (text: string) => void;
const sayOnStderr: Say = (text) => process.stderr.write(`hone: ${text}\n`);

/**
 * One SQLite table of responses by key. First write wins; a corrupt entry reads as a miss. Opened on a file (closed
 * with the store) or on a connection `openRecordDb` opened (its owner closes it).
 *
 * Opened on a file (the shared cache), a read or write the file refuses once open (a full disk, a file made read-only
 * or damaged since, another process's lock held too long) costs that store only: it is said once and the store is
 * left alone for the rest of the run (a miss, a write not made), never a failed model call. A run's own records (a
 * connection) fail loudly: without them the run cannot be replayed.
 */
export class ResponseStore implements ResponseRecords {
  private readonly db: Db;
  private readonly owned: boolean;
  private readonly select: Statement;
  /** None on a cache opened read only (`--cache replay` writes nothing to it). */
  private readonly insert?: Statement;
  private readonly remove?: Statement;
  /** The file, when the store was opened on one (the shared cache), for messages. */
  readonly path?: string;
  /** Why the shared file stopped being read or written in this run, once it did. */
  private unreadable?: string;
  private unwritable?: string;
  private readonly say: Say;
  /**
   * `readonly`: a shared cache that is only read (`--cache replay`), opened without writing to it, so that a cache on a
   * read-only mount or of another user serves a replay.
   */
  constructor(at: string | Db, say: Say = sayOnStderr, opts: { readonly?: boolean } = {}) {
    this.say = say;
    this.owned = typeof at === "string";
    if (typeof at === "string") this.path = at;
    const readonly = typeof at === "string" && opts.readonly === true && existsSync(at);
    this.db = typeof at === "string" ? openCacheFile(at, readonly) : at;
    if (readonly) {
      // A cache file with no table yet holds nothing: every request is a miss.
      this.select = hasTable(this.db, "responses")
        ? this.db.prepare("SELECT response FROM responses WHERE key = ?")
        : this.db.prepare("SELECT NULL AS response WHERE ? IS NULL AND 0");
      return;
    }
    addRecordTable(this.db, RESPONSES);
    this.select = this.db.prepare("SELECT response FROM responses WHERE key = ?");
    this.insert = this.db.prepare("INSERT OR IGNORE INTO responses (key, model, response, created_at) VALUES (?, ?, ?, ?)");
    this.remove = this.db.prepare("DELETE FROM responses WHERE key = ?");
  }
  get(key: string): ChatResponse | undefined {
    if (this.unreadable !== undefined) return undefined;
    let row: { response: string } | undefined;
    try {
      row = this.select.get(key) as { response: string } | undefined;
    } catch (err) {
      this.unreadable = this.fault(err, "read", "without reading it (every request is a miss there)");
      return undefined;
    }
    if (!row) return undefined;
    try {
      const r = JSON.parse(row.response) as ChatResponse;
      // Served as the agent loop and the records read a response: one of any other shape would fail the rollout.
      if (responseFault(r)) throw new Error("shape");
      return r;
    } catch {
      this.write(() => this.remove?.run(key));
      return undefined;
    }
  }
  put(key: string, model: string, response: ChatResponse): void {
    this.putText(key, model, JSON.stringify(response));
  }
  /** A response already serialised (a replay's batch serialises each as it is served and writes them later). */
  putText(key: string, model: string, text: string, createdAt = new Date().toISOString()): void {
    this.write(() => this.insert?.run(key, model, text, createdAt));
  }
  private write(change: () => void): void {
    if (this.unwritable !== undefined) return;
    try {
      change();
    } catch (err) {
      this.unwritable = this.fault(err, "written", "without adding to it");
    }
  }
  /** A shared file's fault, said once and returned; anything else (a run's own records) is thrown as it is. */
  private fault(err: unknown, what: string, how: string): string {
    if (!this.owned || !(err instanceof Error) || !/^SQLITE_/.test(String((err as { code?: unknown }).code))) throw err;
    const why = `${(err as { code?: string }).code}: ${err.message}`.slice(0, 200);
    if (this.unreadable === undefined && this.unwritable === undefined)
      this.say(
        `the request cache ${this.path} could not be ${what} (${why}); this run goes on ${how}, and records every call in its own hone.db as always. Free the space or fix the file, or name another folder with --cache-dir`,
      );
    return why;
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
    // An age past the epoch (`--older-than 99999999d`) keeps everything, as every entry is younger.
    const cutoff = new Date(Math.max(0, Date.now() - olderThanMs)).toISOString();
    return this.db.prepare("DELETE FROM responses WHERE created_at < ?").run(cutoff).changes;
  }
  close(): void {
    if (this.owned) this.db.close();
  }
}

/**
 * The shared cache's file, made if missing, or an error naming it and what to do: a home that cannot be written, a
 * --cache-dir that is a file or read-only are the user's to fix, not a bug.
 */
function openCacheFile(path: string, readonly = false): Db {
  try {
    // Only read: opened as a run's records are read (a read-only mount included).
    if (readonly) return openDb(path, { readonly: true });
    return openRecordDb(path);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // A file SQLite cannot read as a database (cut short by a full disk, overwritten) holds nothing a run could use,
    // and `hone cache clear` cannot open it either: removing it is the way out.
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT")
      throw new HoneError(
        "usage",
        `the request cache ${path} is damaged (${(err as Error).message}); remove it (rm ${path}) and the next run makes a new one, or name another folder with --cache-dir or HONE_CACHE_DIR, or run with --cache off`,
      );
    throw new HoneError(
      "usage",
      `the request cache ${path} cannot be opened for writing (${(err as Error).message}); name a writable folder with --cache-dir or HONE_CACHE_DIR, or run with --cache off`,
    );
  }
}

export function defaultCachePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(honeCacheDir(env), "requests.db");
}

/**
 * The cache key: sha256 over the exact body as sent (model, messages, tools, every sampling field, seed) and the
 * trial index. The body is serialised as the wire serialises it: its key order is fixed by the code that builds it.
 * A scope's successive requests get the same keys from `RequestKeys` (request-keys.ts), which hashes what is new.
 */
export function requestKey(model: ChatModel, request: ChatRequest): string {
  const body = model.wireBody ? model.wireBody(request) : request;
  return createHash("sha256")
    .update(JSON.stringify(body))
    .update(`\0trial=${request.trial ?? 0}`)
    .digest("hex");
}

/**
 * The shared cache's key for a request: its request key, with what the body leaves out that still tells answers
 * apart, so that a hit is an answer this request could have had from this server:
 * - the endpoint (`CacheOptions.endpoint`): two servers under one model name (llama.cpp answers to any name, every
 *   vLLM to its own served name) are two models, and a run's identity names its endpoint;
 * - the request's sampling seed where the wire leaves it out (the openai dialect sends none to reasoning models): a
 *   seed is what makes samples of one prompt distinct draws (`hone eval --samples`, a candidate's rollouts), and
 *   without it every sample after the first was answered with the first one's response.
 * A run's own records need neither: their keys carry scope and occurrence, and a run has one endpoint per role.
 */
export function sharedKey(model: ChatModel, request: ChatRequest, key: string, endpoint?: string): string {
  const extra: string[] = [];
  if (endpoint !== undefined) extra.push(`\0endpoint=${endpoint}`);
  const seed = request.sampling?.seed;
  // Without a wireBody the body hashed is the request, seed and all.
  if (seed !== undefined && model.wireBody) {
    const body = model.wireBody(request);
    if (body === null || typeof body !== "object" || (body as { seed?: unknown }).seed !== seed) extra.push(`\0seed=${seed}`);
  }
  return extra.length ? createHash("sha256").update(key).update(extra.join("")).digest("hex") : key;
}

/** Responses by key: the shared cache (by request) or a run's own records (by request, scope and occurrence). */
export interface ResponseRecords {
  get(key: string): ChatResponse | undefined;
  put(key: string, model: string, response: ChatResponse): void;
}

/** Records kept in memory (a worker's, shipped back with its job's result). */
export class MemoryResponses implements ResponseRecords {
  private readonly byKey = new Map<string, { model: string; response: ChatResponse }>();
  get(key: string): ChatResponse | undefined {
    return this.byKey.get(key)?.response;
  }
  put(key: string, model: string, response: ChatResponse): void {
    if (!this.byKey.has(key)) this.byKey.set(key, { model, response });
  }
  entries(): { key: string; model: string; response: ChatResponse }[] {
    return [...this.byKey].map(([key, v]) => ({ key, ...v }));
  }
}

/**
 * A run's own key for a response: the request's key, the scope it was made in (a rollout, a QA job, a proposer
 * round) and its occurrence there (0 for the first identical request, 1 for the second…), so a model that answers
 * the same request differently each time is replayed call by call.
 */
export function occurrenceKey(key: string, scope: string, n: number): string {
  return createHash("sha256").update(`${key}\0scope=${scope}\0n=${n}`).digest("hex");
}

export interface CacheOptions {
  mode: CacheMode;
  /** Shared stores looked up by request key (read-write, and replay without a recorded run), in order. */
  read: ResponseStore[];
  /** Shared stores every new response goes to by request key (the shared cache unless off). */
  write: ResponseStore[];
  /** The run's own records: every response it got, by occurrence key (read back in read-write mode on resume). */
  record?: ResponseRecords;
  /**
   * The endpoint's URL (no password) as part of the shared stores' keys; undefined for the built-in offline model,
   * which answers the same wherever it is served (a new loopback port each run).
   */
  endpoint?: string;
  /** replay: the recorded run's own records, looked up by occurrence key (then, for older runs, by request key). */
  replayFrom?: ResponseRecords[];
}

/** A cached model; `scoped(name)` gives the same model with its own occurrence counters (one per rollout or job). */
export interface CachedModel extends ChatModel {
  scoped(scope: string): ChatModel;
}

/** The model for one scope: a cached model's scoped view, any other model as it is. */
export function forScope(model: ChatModel, scope: string): ChatModel {
  return typeof (model as Partial<CachedModel>).scoped === "function" ? (model as CachedModel).scoped(scope) : model;
}

/**
 * Where a response may come from, in order: [store, key to look up]. `key` is the request key (older runs recorded
 * responses by it), `shared` the shared cache's key, `own` the run's own record key.
 */
function sources(o: CacheOptions, key: string, shared: string, own: string): [ResponseRecords, string][] {
  const replayFrom = o.replayFrom ?? [];
  if (o.mode === "replay")
    return [
      ...replayFrom.map((s): [ResponseRecords, string] => [s, own]),
      ...replayFrom.map((s): [ResponseRecords, string] => [s, key]),
      ...o.read.map((s): [ResponseRecords, string] => [s, shared]),
    ];
  if (o.mode === "off") return [];
  return [
    ...(o.record ? [[o.record, own] as [ResponseRecords, string]] : []),
    ...o.read.map((s): [ResponseRecords, string] => [s, shared]),
  ];
}

function lookup(
  o: CacheOptions,
  key: string,
  shared: string,
  own: string,
): { hit: ChatResponse; from: ResponseRecords } | undefined {
  for (const [store, k] of sources(o, key, shared, own)) {
    const hit = store.get(k);
    if (hit) return { hit, from: store };
  }
  return undefined;
}

/**
 * A request --cache replay has no answer for. Replaying a run (`hone replay`) reads that run's records; a new run
 * with --cache replay reads only the shared cache, so the message names that file and the ways out.
 */
function replayMiss(o: CacheOptions, model: ChatModel, key: string, n: number, scope: string): ModelError {
  const where = `key ${key.slice(0, 16)}…, occurrence ${n} in ${scope || "the run"}`;
  if (o.replayFrom?.length)
    return new ModelError(
      "replay_miss",
      `replay: this request was never recorded (${where}); the run cannot be replayed exactly from its records`,
      { url: model.id },
    );
  const caches = o.read.map((s) => s.path ?? "the request cache").join(", ") || "no request cache";
  return new ModelError(
    "replay_miss",
    `--cache replay: this request was never recorded in ${caches} (${where}), and --cache replay calls no model; run with --cache read-write (the default) to call the model and record it, point --cache-dir at the cache an earlier run filled, or replay a finished run from its own records with \`hone replay <run-dir>\``,
    { url: model.id },
  );
}

/**
 * The request cache as a wrapper around any ChatModel. Errors are never cached; hits come back flagged
 * `cached: true` with zero latency and no retries, so latency statistics and fault counts leave them out. Every
 * response, hit or live, is recorded in the run's own records under its occurrence key.
 */
export function withCache(model: ChatModel, o: CacheOptions): CachedModel {
  const scopedModel = (scope: string): ChatModel => {
    const seen = new Map<string, number>();
    const keys = new RequestKeys();
    return {
      id: model.id,
      wireBody: model.wireBody?.bind(model),
      async complete(request, signal) {
        const key = keys.key(model, request);
        const n = seen.get(key) ?? 0;
        seen.set(key, n + 1);
        const own = occurrenceKey(key, scope, n);
        const shared = sharedKey(model, request, key, o.endpoint);
        const found = lookup(o, key, shared, own);
        if (found) {
          o.record?.put(own, model.id, found.hit);
          if (o.mode === "read-write") for (const w of o.write) if (w !== found.from) w.put(shared, model.id, found.hit);
          return { ...found.hit, cached: true, latency_ms: 0, attempts: 0 };
        }
        if (o.mode === "replay") throw replayMiss(o, model, key, n, scope);
        const response = await model.complete(request, signal);
        const { cached: _c, faults: _f, ...toStore } = response;
        o.record?.put(own, model.id, toStore);
        for (const s of o.write) s.put(shared, model.id, toStore);
        return response;
      },
    };
  };
  const unscoped = scopedModel("");
  return { ...unscoped, scoped: scopedModel };
}
