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

/**
 * The tasks a recorded run measured, as its rollouts' identities name them (id and content hash), each once; empty for
 * a run with no rollouts (eval, train) or identities that cannot be read.
 */
export function recordedTasks(db: Db): { id: string; content: string }[] {
  if (!hasTable(db, "rollouts")) return [];
  const rows = db.prepare("SELECT DISTINCT identity FROM rollouts WHERE identity IS NOT NULL").all() as { identity: unknown }[];
  const out = new Map<string, { id: string; content: string }>();
  for (const { identity } of rows) {
    try {
      const task = (JSON.parse(String(identity)) as { task?: { id?: unknown; content?: unknown } } | null)?.task;
      if (typeof task?.id === "string" && typeof task.content === "string")
        out.set(`${task.id}\0${task.content}`, { id: task.id, content: task.content });
    } catch {
      // an unreadable identity names no task; the records' own checks report the damage
    }
  }
  return [...out.values()];
}
