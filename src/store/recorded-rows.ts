import type { Statement } from "better-sqlite3";
import { type Db, hasTable } from "./db.ts";

/** What a recorded run holds under a key: nothing, the value as read, or why it is not what a run writes. */
export type RecordedRow = { value: unknown } | { fault: string } | undefined;

/**
 * One JSON column of a recorded run's table, read by key (`hone replay`, on a connection that only reads). `fault`
 * says why a parsed value is not what a run writes, undefined when it is; the caller names the record and the file.
 * `table` and `column` are hone's own names, never input.
 */
export function recordedRows(
  db: Db,
  table: string,
  column: string,
  fault: (value: unknown) => string | undefined,
): (key: string) => RecordedRow {
  const select: Statement | undefined = hasTable(db, table)
    ? db.prepare(`SELECT ${column} FROM ${table} WHERE key = ?`)
    : undefined;
  return (key) => {
    const row = select?.get(key) as Record<string, unknown> | undefined;
    if (!row) return undefined;
    const text = row[column];
    if (typeof text !== "string") return { fault: "it is not text" };
    try {
      const value: unknown = JSON.parse(text);
      const why = fault(value);
      return why ? { fault: why } : { value };
    } catch (err) {
      return { fault: `it is not readable JSON (${(err as Error).message.slice(0, 80)})` };
    }
  };
}

/** The evaluator's Python and numpy versions as a recorded identity names them. */
export type RecordedRuntime = { python: string; numpy: string | null; sandbox?: "bubblewrap" | "none" };

const runtimeOf = (v: unknown): RecordedRuntime | undefined => {
  const r = v as { python?: unknown; numpy?: unknown; sandbox?: unknown } | null | undefined;
  if (typeof r?.python !== "string") return undefined;
  const sandbox = r.sandbox === "bubblewrap" || r.sandbox === "none" ? r.sandbox : undefined;
  return { python: r.python, numpy: typeof r.numpy === "string" ? r.numpy : null, sandbox };
};

/**
 * The tasks a recorded run measured, as its rollouts' identities name them (id, content hash and the evaluator's
 * versions where recorded), each once; empty for a run with no rollouts (eval, train) or identities that cannot be read.
 */
export function recordedTasks(db: Db): { id: string; content: string; evaluator?: RecordedRuntime }[] {
  if (!hasTable(db, "rollouts")) return [];
  const rows = db.prepare("SELECT DISTINCT identity FROM rollouts WHERE identity IS NOT NULL").all() as { identity: unknown }[];
  const out = new Map<string, { id: string; content: string; evaluator?: RecordedRuntime }>();
  for (const { identity } of rows) {
    try {
      const task = (JSON.parse(String(identity)) as { task?: { id?: unknown; content?: unknown; evaluator?: unknown } } | null)
        ?.task;
      if (typeof task?.id === "string" && typeof task.content === "string")
        out.set(`${task.id}\0${task.content}`, { id: task.id, content: task.content, evaluator: runtimeOf(task.evaluator) });
    } catch {
      // an unreadable identity names no task; the records' own checks report the damage
    }
  }
  return [...out.values()];
}

/**
 * Each recorded rollout's evaluator versions (`task.evaluator` of its identity), by rollout id: a run resumed on
 * another machine, or after a numpy upgrade, measured its rollouts under more than one, and a replay names each
 * rollout's as it was recorded. A rollout whose identity names none maps to undefined; one with no readable identity
 * is left out.
 */
export function recordedEvaluators(db: Db): Map<string, RecordedRuntime | undefined> {
  const out = new Map<string, RecordedRuntime | undefined>();
  if (!hasTable(db, "rollouts")) return out;
  const rows = db.prepare("SELECT id, identity FROM rollouts WHERE identity IS NOT NULL").all() as {
    id: unknown;
    identity: unknown;
  }[];
  for (const { id, identity } of rows) {
    try {
      const task = (JSON.parse(String(identity)) as { task?: { evaluator?: unknown } } | null)?.task;
      if (typeof id === "string" && task && typeof task === "object") out.set(id, runtimeOf(task.evaluator));
    } catch {
      // an unreadable identity: the replay's own checks report the damage
    }
  }
  return out;
}
