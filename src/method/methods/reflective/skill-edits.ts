import type { SkillEdit } from "../../rules/skillopt.ts";

/**
 * A rewritten skill document read back as SkillOpt edits ({op, target, content}): each run of changed lines of a
 * line diff (LCS) is one edit, so the edit budget (rules/skillopt.ts `clipEdits`) bounds how much of a rewrite is
 * applied. Targets are exact text of the old document, widened with the lines before them until their first
 * occurrence is where the change is (SkillOpt's `replace`, `delete` and `insert_after` act on the first occurrence).
 * Edits come in document order; apply them bottom first (`applyInReverse`) so a target's text is never moved by an
 * edit above it.
 */

const MAX_CELLS = 4_000_000;

interface Hunk {
  a0: number;
  a1: number;
  b0: number;
  b1: number;
}

/** Changed runs between two line lists: common prefix and suffix trimmed, an LCS table for the middle. */
export function lineHunks(a: readonly string[], b: readonly string[]): Hunk[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const x = a.slice(pre, a.length - suf);
  const y = b.slice(pre, b.length - suf);
  if (x.length === 0 && y.length === 0) return [];
  if ((x.length + 1) * (y.length + 1) > MAX_CELLS || x.length === 0 || y.length === 0)
    return [{ a0: pre, a1: pre + x.length, b0: pre, b1: pre + y.length }];
  const w = y.length + 1;
  const t = new Uint32Array((x.length + 1) * w);
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--)
      t[i * w + j] =
        x[i] === y[j]
          ? (t[(i + 1) * w + j + 1] as number) + 1
          : Math.max(t[(i + 1) * w + j] as number, t[i * w + j + 1] as number);
  const hunks: Hunk[] = [];
  let [i, j] = [0, 0];
  let open: Hunk | undefined;
  const close = () => {
    if (open) hunks.push(open);
    open = undefined;
  };
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      close();
      i++;
      j++;
      continue;
    }
    open ??= { a0: pre + i, a1: pre + i, b0: pre + j, b1: pre + j };
    if (j < y.length && (i === x.length || (t[i * w + j + 1] as number) >= (t[(i + 1) * w + j] as number))) {
      j++;
      open.b1 = pre + j;
    } else {
      i++;
      open.a1 = pre + i;
    }
  }
  close();
  return hunks;
}

function offsets(lines: readonly string[]): number[] {
  const out = [0];
  for (const l of lines) out.push((out.at(-1) as number) + l.length + 1);
  return out;
}

/** The smallest start ≤ `from` whose lines [start, to) first occur at their own offset (or at 0). */
function anchored(text: string, lines: readonly string[], at: readonly number[], from: number, to: number, tail = ""): number {
  let start = from;
  while (start > 0) {
    const target = lines.slice(start, to).join("\n") + tail;
    if (target.trim() && text.indexOf(target) === at[start]) break;
    start--;
  }
  return start;
}

/** SkillOpt edits that turn `before` into `after`, one per changed run of lines, in document order. */
export function editsBetween(before: string, after: string): SkillEdit[] {
  const a = before.split("\n");
  const b = after.split("\n");
  const at = offsets(a);
  const edits: SkillEdit[] = [];
  for (const h of lineHunks(a, b)) {
    const added = b.slice(h.b0, h.b1);
    if (h.a0 === h.a1) {
      if (h.a0 >= a.length || a.slice(h.a0).every((l) => !l.trim())) {
        edits.push({ op: "append", content: added.join("\n") });
        continue;
      }
      if (h.a0 > 0) {
        const s = anchored(before, a, at, h.a0 - 1, h.a0);
        const context = a.slice(s, h.a0 - 1);
        const target = a.slice(s, h.a0).join("\n");
        // Context lines widen the target only; the content is inserted after the last of them.
        edits.push(
          context.length
            ? { op: "replace", target, content: [...a.slice(s, h.a0), ...added].join("\n") }
            : { op: "insert_after", target, content: added.join("\n") },
        );
        continue;
      }
      edits.push({ op: "replace", target: a.slice(0, 1).join("\n"), content: [...added, a[0] ?? ""].join("\n") });
      continue;
    }
    const tail = added.length === 0 && h.a1 < a.length ? "\n" : "";
    const s = anchored(before, a, at, h.a0, h.a1, tail);
    const target = a.slice(s, h.a1).join("\n") + tail;
    const kept = a.slice(s, h.a0);
    if (added.length === 0 && kept.length === 0) edits.push({ op: "delete", target });
    else edits.push({ op: "replace", target, content: [...kept, ...added].join("\n") + (added.length === 0 ? "\n" : "") });
  }
  return edits;
}
