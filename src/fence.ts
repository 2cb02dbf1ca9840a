// Texts in fenced blocks, as the reflective methods' prompts carry them and their replies return them, written and read
// by CommonMark's rule for fences: a block's fence is longer than any run of backticks inside it, so a text holding
// code examples (a SKILL.md, a prompt with a ```python example) travels whole. Imports nothing of hone's.

/** Three backticks, or one more than the longest run of backticks in `body`. */
export function fenceFor(body: string): string {
  let longest = 0;
  for (const m of body.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return "`".repeat(Math.max(3, longest + 1));
}

/** `body` as a block whose opening fence carries `info` (e.g. `component playbook`), closed on a line of its own. */
export function fenced(info: string, body: string): string {
  const fence = fenceFor(body);
  return `${fence}${info}\n${body.endsWith("\n") ? body : `${body}\n`}${fence}`;
}

export interface FencedBlock {
  /** The opening fence's info string, trimmed (`component playbook`). */
  info: string;
  /** The text between the fences, as it stands (with the line break before a closing fence line). */
  body: string;
}

/** A line of a text that is a fence: where it starts and ends, its backticks, and its info string. */
interface FenceLine {
  start: number;
  end: number;
  ticks: number;
  info: string;
}

/** Every line that is a fence (up to three spaces, then three backticks or more), in one pass over the text. */
function fenceLines(text: string): FenceLine[] {
  const lines: FenceLine[] = [];
  for (const m of text.matchAll(/^ {0,3}(`{3,})([^`\n]*)$/gm))
    lines.push({ start: m.index, end: m.index + m[0].length, ticks: (m[1] as string).length, info: (m[2] as string).trim() });
  return lines;
}

/** Where a block's body ends, where reading goes on, and the first fence line not yet passed. */
interface Close {
  bodyEnd: number;
  next: number;
  line: number;
}

/**
 * Where the block opened by a fence of `ticks` backticks, its body starting at `from`, closes: the first later fence
 * line of at least as many backticks and no info string. A writer that kept three backticks although the text holds
 * fences (a model's reply) is read with nesting: a fence with an info string (```python) opens an inner block, which
 * the next bare fence closes. Lines are looked at from `at` on.
 */
function closingLine(lines: FenceLine[], at: number, ticks: number): Close | undefined {
  let depth = 0;
  for (let i = at; i < lines.length; i++) {
    const l = lines[i] as FenceLine;
    if (l.info === "" && l.ticks >= ticks && depth === 0) return { bodyEnd: l.start, next: l.end, line: i + 1 };
    if (ticks === 3 && l.info !== "") depth++;
    else if (ticks === 3 && l.info === "" && depth > 0) depth--;
  }
  return undefined;
}

/**
 * The blocks of `text` whose info string starts with `prefix`, in order. Every block is read, of whatever kind, so a
 * code example's closing fence is never taken for an opening one. An opening fence may stand anywhere (a reply may
 * write "Here: ```component x"), and a block no fence line closes ends at the first run of its fence's backticks
 * (closed at the end of its last line); once one such block is met, the later ones are read that way too, so reading
 * stays linear in the text. A wanted block nothing closes ends the reading; another kind's is passed over.
 */
export function fencedBlocks(text: string, prefix: string): FencedBlock[] {
  const lines = fenceLines(text);
  const blocks: FencedBlock[] = [];
  const open = /(?<!`)(`{3,})([^`\n]*)\n/g;
  let line = 0;
  let byLines = true;
  for (let m = open.exec(text); m; m = open.exec(text)) {
    const info = (m[2] as string).trim();
    const wanted = info.startsWith(prefix);
    const from = m.index + m[0].length;
    const ticks = (m[1] as string).length;
    while (line < lines.length && (lines[line] as FenceLine).start < from) line++;
    let close = byLines ? closingLine(lines, line, ticks) : undefined;
    if (!close) {
      byLines = false;
      if (!wanted) continue;
      const inline = text.indexOf("`".repeat(ticks), from);
      if (inline < 0) break;
      close = { bodyEnd: inline, next: inline + ticks, line };
    }
    if (wanted) blocks.push({ info, body: text.slice(from, close.bodyEnd) });
    open.lastIndex = close.next;
    line = close.line;
  }
  return blocks;
}
