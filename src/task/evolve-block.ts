/**
 * The editable region of a discovery program: the lines between `# EVOLVE-BLOCK-START` and `# EVOLVE-BLOCK-END`.
 * In OpenEvolve these markers are only prompt hints; here every edit is checked against them. A program with no
 * marker at all is editable whole (OpenEvolve never requires them; the task loader accepts such a seed only in the
 * OpenEvolve layout), and stays without markers: an edit may neither add them to it nor remove them from another.
 */
export const EVOLVE_START = "EVOLVE-BLOCK-START";
export const EVOLVE_END = "EVOLVE-BLOCK-END";

export interface Region {
  /** Offset of the first character after the start marker's line. */
  start: number;
  /** Offset of the first character of the end marker's line. */
  end: number;
  /** 1-based line numbers of the editable lines (inclusive); empty regions have startLine > endLine. */
  startLine: number;
  endLine: number;
}

export class EditError extends Error {
  override name = "EditError";
}

// A file may open with a byte-order mark (an editor on Windows writes one; Python and OpenEvolve read past it).
const MARKER = /^\uFEFF?[ \t]*(?:#|\/\/)[ \t]*(EVOLVE-BLOCK-START|EVOLVE-BLOCK-END)\b.*$/gm;

/** Line numbers of offsets asked in increasing order, counting each newline of the text once. */
function lineCounter(text: string): (offset: number) => number {
  let pos = 0;
  let line = 1;
  return (offset) => {
    if (offset < pos) {
      pos = 0;
      line = 1;
    }
    for (let nl = text.indexOf("\n", pos); nl >= 0 && nl < offset; nl = text.indexOf("\n", nl + 1)) line++;
    pos = offset;
    return line;
  };
}

/** Finds the editable regions; throws EditError when markers are missing, unpaired or nested. */
export function findRegions(program: string): Region[] {
  const regions: Region[] = [];
  const lineOf = lineCounter(program);
  let open: number | undefined;
  for (const m of program.matchAll(MARKER)) {
    const at = m.index ?? 0;
    if (m[1] === EVOLVE_START) {
      if (open !== undefined) throw new EditError(`nested ${EVOLVE_START} at line ${lineOf(at)}`);
      const nl = program.indexOf("\n", at);
      open = nl < 0 ? program.length : nl + 1;
    } else {
      if (open === undefined) throw new EditError(`${EVOLVE_END} at line ${lineOf(at)} has no ${EVOLVE_START} before it`);
      regions.push({ start: open, end: at, startLine: lineOf(open), endLine: lineOf(at) - 1 });
      open = undefined;
    }
  }
  if (open !== undefined) throw new EditError(`${EVOLVE_START} has no ${EVOLVE_END} after it`);
  if (regions.length === 0)
    throw new EditError(`the program has no editable region (no # ${EVOLVE_START} / # ${EVOLVE_END} lines)`);
  return regions;
}

const ANY_MARKER = /^\uFEFF?[ \t]*(?:#|\/\/)[ \t]*EVOLVE-BLOCK-(?:START|END)\b/m;

/** Whether the program has any EVOLVE-BLOCK marker line. */
export const hasEvolveMarkers = (program: string): boolean => ANY_MARKER.test(program);

/**
 * What a new block may not hold: OpenEvolve and hone_kept.py find a marker as a substring (`"# EVOLVE-BLOCK-END" in
 * line`), so `# EVOLVE-BLOCK-END_2`, `# EVOLVE-BLOCK-START2` or a marker after code on a line would be read as one
 * there. No anchor and no word boundary: a line opening with a byte-order mark is caught too.
 */
const MARKER_IN_BLOCK = /(?:#|\/\/)[ \t]*EVOLVE-BLOCK-(?:START|END)/;

/** The regions an edit may change: the EVOLVE blocks, or the whole program when it has no marker at all. */
export function editableRegions(program: string): Region[] {
  if (hasEvolveMarkers(program)) return findRegions(program);
  const lines = program.length === 0 ? 0 : program.split("\n").length - (program.endsWith("\n") ? 1 : 0);
  return [{ start: 0, end: program.length, startLine: 1, endLine: lines }];
}

/** The text outside every editable region, markers included; an edit may never change it. */
export function frozenParts(program: string, regions = editableRegions(program)): string[] {
  const parts: string[] = [];
  let last = 0;
  for (const r of regions) {
    parts.push(program.slice(last, r.start));
    last = r.end;
  }
  parts.push(program.slice(last));
  return parts;
}

/** Throws unless `edited` keeps every frozen part of `original` byte for byte. */
export function assertFrozenUnchanged(original: string, edited: string): void {
  const marked = hasEvolveMarkers(original);
  if (marked !== hasEvolveMarkers(edited))
    throw new EditError(
      marked
        ? "the edit would remove every EVOLVE-BLOCK marker; only code between them may change"
        : "the edit would add EVOLVE-BLOCK markers to a program that has none (the whole program is editable as it is)",
    );
  let editedRegions: Region[];
  try {
    editedRegions = editableRegions(edited);
  } catch (err) {
    throw new EditError(`the edit would break the EVOLVE-BLOCK markers: ${(err as Error).message}`);
  }
  const before = frozenParts(original);
  const after = frozenParts(edited, editedRegions);
  if (before.length !== after.length) throw new EditError("the edit would add or remove an EVOLVE block");
  before.forEach((part, i) => {
    if (part !== after[i]) throw new EditError("the edit changes code outside the EVOLVE block, which is not editable");
  });
  // Only with markers: a program without any is edited whole, and may say what it likes.
  if (!marked) return;
  const beforeRegions = editableRegions(original);
  editedRegions.forEach((r, i) => {
    const was = beforeRegions[i];
    const had = was !== undefined && MARKER_IN_BLOCK.test(original.slice(was.start, was.end));
    if (!had && MARKER_IN_BLOCK.test(edited.slice(r.start, r.end)))
      throw new EditError("the edit would put an EVOLVE-BLOCK marker inside the block, which OpenEvolve would read as one");
  });
}

export function blockText(program: string, index = 0): string {
  const r = editableRegions(program)[index];
  if (!r) throw new EditError(`there is no EVOLVE block number ${index}`);
  return program.slice(r.start, r.end);
}

/** Replaces the whole content of one EVOLVE block. */
export function replaceBlock(program: string, newBlock: string, index = 0): string {
  if (newBlock.length > MAX_EDIT_CHARS)
    throw new EditError(`the new block is ${newBlock.length} characters; the limit is ${MAX_EDIT_CHARS}`);
  const regions = editableRegions(program);
  const r = regions[index];
  if (!r) throw new EditError(`there is no EVOLVE block number ${index} (the program has ${regions.length})`);
  // A block that already held such text (a string naming a marker) may keep it, as assertFrozenUnchanged allows.
  if (MARKER_IN_BLOCK.test(newBlock) && !MARKER_IN_BLOCK.test(program.slice(r.start, r.end))) {
    throw new EditError("the new block may not contain EVOLVE-BLOCK markers");
  }
  const body = newBlock.length > 0 && !newBlock.endsWith("\n") ? `${newBlock}\n` : newBlock;
  const edited = program.slice(0, r.start) + body + program.slice(r.end);
  assertProgramSize(program, edited);
  assertFrozenUnchanged(program, edited);
  return edited;
}

/**
 * The SEARCH/REPLACE edit format (as in aider and OpenEvolve's diff mode), read line by line in one pass:
 *
 *     <<<<<<< SEARCH
 *     the exact lines to find
 *     =======
 *     the lines that replace them
 *     >>>>>>> REPLACE
 *
 * Each marker stands on a line of its own (surrounding spaces and a trailing \r are ignored). Text outside the
 * blocks is ignored; inside a REPLACE part a `=======` line is content. Every character is looked at a bounded
 * number of times, so a malformed or hostile edit costs time proportional to its length, and the length and the
 * number of blocks are capped.
 */
export interface SearchReplace {
  search: string;
  replace: string;
}

/** Longest edit text (or whole-block replacement) accepted, in characters. */
export const MAX_EDIT_CHARS = 512 * 1024;
/** Most SEARCH/REPLACE blocks in one edit. */
export const MAX_EDIT_BLOCKS = 200;

export const SEARCH_MARK = "<<<<<<< SEARCH";
export const DIVIDER = "=======";
export const REPLACE_MARK = ">>>>>>> REPLACE";
const LONGEST_MARKER_LINE = 64;

type Marker = "search" | "divider" | "replace";

function markerOf(line: string): Marker | undefined {
  if (line.length > LONGEST_MARKER_LINE) return undefined;
  const t = line.trim();
  if (t === SEARCH_MARK) return "search";
  if (t === DIVIDER) return "divider";
  if (t === REPLACE_MARK) return "replace";
  return undefined;
}

/** Content lines joined back as they were written, without the newline (or \r\n) before the next marker. */
function joined(lines: string[]): string {
  const text = lines.join("\n");
  return text.endsWith("\r") ? text.slice(0, -1) : text;
}

/** Counts the work a parse did (lines read), so tests can check it is linear without timing it. */
export interface ParseStats {
  lines: number;
}

interface OpenBlock {
  line: number;
  search: string[];
  replace: string[] | undefined;
}

export function parseSearchReplace(text: string, stats: ParseStats = { lines: 0 }): SearchReplace[] {
  if (text.length > MAX_EDIT_CHARS)
    throw new EditError(
      `the edit is ${text.length} characters; the limit is ${MAX_EDIT_CHARS} (send fewer or smaller SEARCH/REPLACE blocks)`,
    );
  const blocks: SearchReplace[] = [];
  let open: OpenBlock | undefined;
  const label = (b: OpenBlock) => `SEARCH block ${blocks.length + 1} (line ${b.line})`;
  let pos = 0;
  let lineNo = 0;
  while (pos <= text.length) {
    const nl = text.indexOf("\n", pos);
    const line = text.slice(pos, nl < 0 ? text.length : nl);
    pos = nl < 0 ? text.length + 1 : nl + 1;
    lineNo++;
    stats.lines++;
    const marker = markerOf(line);
    if (!open) {
      if (marker === "search") open = { line: lineNo, search: [], replace: undefined };
      continue;
    }
    if (open.replace === undefined) {
      if (marker === "divider") open.replace = [];
      else if (marker === "search")
        throw new EditError(`${label(open)} has no ${DIVIDER} line before the next ${SEARCH_MARK} (line ${lineNo})`);
      else if (marker === "replace")
        throw new EditError(`${label(open)} has no ${DIVIDER} line before ${REPLACE_MARK} (line ${lineNo})`);
      else open.search.push(line);
      continue;
    }
    if (marker === "replace") {
      if (blocks.length >= MAX_EDIT_BLOCKS)
        throw new EditError(`the edit has more than ${MAX_EDIT_BLOCKS} SEARCH/REPLACE blocks; split it into several edits`);
      blocks.push({ search: joined(open.search), replace: joined(open.replace) });
      open = undefined;
    } else if (marker === "search") {
      throw new EditError(`${label(open)} has no ${REPLACE_MARK} line before the next ${SEARCH_MARK} (line ${lineNo})`);
    } else {
      open.replace.push(line);
    }
  }
  if (open) {
    const missing = open.replace === undefined ? `a ${DIVIDER} line and a ${REPLACE_MARK} line` : `a ${REPLACE_MARK} line`;
    throw new EditError(`${label(open)} is not closed: ${missing} must follow, each on a line of its own`);
  }
  if (blocks.length === 0) {
    throw new EditError(
      `no SEARCH/REPLACE block found; write ${SEARCH_MARK}, the exact lines, ${DIVIDER}, the new lines, ${REPLACE_MARK}, each marker on a line of its own`,
    );
  }
  return blocks;
}

/** Longest program an edit may produce (or the original's length, if that is longer). */
export const MAX_PROGRAM_CHARS = 512 * 1024;

function assertProgramSize(original: string, edited: string): void {
  const limit = Math.max(MAX_PROGRAM_CHARS, original.length);
  if (edited.length > limit)
    throw new EditError(`the edited program would be ${edited.length} characters; the limit is ${limit}`);
}

/**
 * Most characters the SEARCH blocks of one edit may scan (each block scans the program once): an edit of many
 * blocks over a large program is refused rather than left to stall the host.
 */
export const MAX_EDIT_WORK = 2 * 1024 * 1024;

/**
 * Where `search` occurs in `program`: the first occurrence at all, and the first lying wholly inside one region.
 * Knuth-Morris-Pratt, so one pass of program.length + search.length steps whatever the text (the engine's
 * indexOf is not linear: a 2.5 KB pattern a…aba…a took 2.7 s over 1.9 MB of a's).
 */
function occurrences(program: string, search: string, regions: readonly Region[]): { first: number; inside?: number } {
  const m = search.length;
  const fail = new Int32Array(m);
  for (let i = 1, k = 0; i < m; i++) {
    const c = search.charCodeAt(i);
    while (k > 0 && c !== search.charCodeAt(k)) k = fail[k - 1] as number;
    if (c === search.charCodeAt(k)) k++;
    fail[i] = k;
  }
  let first = -1;
  let r = 0;
  const n = program.length;
  for (let i = 0, k = 0; i < n; i++) {
    const c = program.charCodeAt(i);
    while (k > 0 && c !== search.charCodeAt(k)) k = fail[k - 1] as number;
    if (c === search.charCodeAt(k)) k++;
    if (k < m) continue;
    const at = i - m + 1;
    if (first < 0) first = at;
    while (r < regions.length && (regions[r] as Region).end < i + 1) r++;
    const region = regions[r];
    if (region && at >= region.start) return { first, inside: at };
    k = fail[k - 1] as number;
  }
  return { first };
}

/**
 * Applies SEARCH/REPLACE blocks in order, all or nothing. Each SEARCH text must match inside an editable region
 * (the first such occurrence is replaced); a match that touches frozen code is refused with the lines it would
 * have changed.
 */
export function applySearchReplace(program: string, editText: string): string {
  let current = program;
  let work = 0;
  parseSearchReplace(editText).forEach((b, i) => {
    const label = `SEARCH block ${i + 1}`;
    if (b.search.trim().length === 0) throw new EditError(`${label} is empty`);
    work += current.length + b.search.length;
    if (work > MAX_EDIT_WORK)
      throw new EditError(
        `${label}: the edit's blocks would scan more than ${MAX_EDIT_WORK} characters of a ${current.length}-character program; send fewer blocks per edit`,
      );
    const regions = editableRegions(current);
    const { first, inside } = occurrences(current, b.search, regions);
    if (first < 0)
      throw new EditError(
        `${label} does not match the program exactly (check whitespace and indentation; view_program shows the current text)`,
      );
    if (inside === undefined) {
      const lineOf = lineCounter(current);
      const from = lineOf(first);
      const to = lineOf(first + b.search.length);
      const r0 = regions[0] as Region;
      throw new EditError(
        `${label} matches lines ${from}-${to}, outside the editable region (lines ${r0.startLine}-${r0.endLine}); only code between the EVOLVE-BLOCK markers may change`,
      );
    }
    const edited = current.slice(0, inside) + b.replace + current.slice(inside + b.search.length);
    assertProgramSize(program, edited);
    assertFrozenUnchanged(current, edited);
    current = edited;
  });
  assertFrozenUnchanged(program, current);
  return current;
}
