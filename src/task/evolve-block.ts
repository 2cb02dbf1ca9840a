/**
 * The editable region of a discovery program: the lines between `# EVOLVE-BLOCK-START` and `# EVOLVE-BLOCK-END`.
 * In OpenEvolve these markers are only prompt hints; here every edit is checked against them.
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

const MARKER = /^[ \t]*(?:#|\/\/)[ \t]*(EVOLVE-BLOCK-START|EVOLVE-BLOCK-END)\b.*$/gm;

function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Finds the editable regions; throws EditError when markers are missing, unpaired or nested. */
export function findRegions(program: string): Region[] {
  const regions: Region[] = [];
  let open: number | undefined;
  for (const m of program.matchAll(MARKER)) {
    const at = m.index ?? 0;
    if (m[1] === EVOLVE_START) {
      if (open !== undefined) throw new EditError(`nested ${EVOLVE_START} at line ${lineOf(program, at)}`);
      const nl = program.indexOf("\n", at);
      open = nl < 0 ? program.length : nl + 1;
    } else {
      if (open === undefined)
        throw new EditError(`${EVOLVE_END} at line ${lineOf(program, at)} has no ${EVOLVE_START} before it`);
      regions.push({ start: open, end: at, startLine: lineOf(program, open), endLine: lineOf(program, at) - 1 });
      open = undefined;
    }
  }
  if (open !== undefined) throw new EditError(`${EVOLVE_START} has no ${EVOLVE_END} after it`);
  if (regions.length === 0)
    throw new EditError(`the program has no editable region (no # ${EVOLVE_START} / # ${EVOLVE_END} lines)`);
  return regions;
}

/** The text outside every editable region, markers included; an edit may never change it. */
export function frozenParts(program: string, regions = findRegions(program)): string[] {
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
  let editedRegions: Region[];
  try {
    editedRegions = findRegions(edited);
  } catch (err) {
    throw new EditError(`the edit would break the EVOLVE-BLOCK markers: ${(err as Error).message}`);
  }
  const before = frozenParts(original);
  const after = frozenParts(edited, editedRegions);
  if (before.length !== after.length) throw new EditError("the edit would add or remove an EVOLVE block");
  before.forEach((part, i) => {
    if (part !== after[i]) throw new EditError("the edit changes code outside the EVOLVE block, which is not editable");
  });
}

export function blockText(program: string, index = 0): string {
  const r = findRegions(program)[index];
  if (!r) throw new EditError(`there is no EVOLVE block number ${index}`);
  return program.slice(r.start, r.end);
}

/** Replaces the whole content of one EVOLVE block. */
export function replaceBlock(program: string, newBlock: string, index = 0): string {
  const regions = findRegions(program);
  const r = regions[index];
  if (!r) throw new EditError(`there is no EVOLVE block number ${index} (the program has ${regions.length})`);
  if (/^[ \t]*(?:#|\/\/)[ \t]*EVOLVE-BLOCK-(START|END)/m.test(newBlock)) {
    throw new EditError("the new block may not contain EVOLVE-BLOCK markers");
  }
  const body = newBlock.length > 0 && !newBlock.endsWith("\n") ? `${newBlock}\n` : newBlock;
  const edited = program.slice(0, r.start) + body + program.slice(r.end);
  assertFrozenUnchanged(program, edited);
  return edited;
}

export interface SearchReplace {
  search: string;
  replace: string;
}

const BLOCK = /<<<<<<< SEARCH\r?\n([\s\S]*?)\r?\n?=======\r?\n([\s\S]*?)\r?\n?>>>>>>> REPLACE/g;

export function parseSearchReplace(text: string): SearchReplace[] {
  const blocks = [...text.matchAll(BLOCK)].map((m) => ({ search: m[1] ?? "", replace: m[2] ?? "" }));
  if (blocks.length === 0) {
    throw new EditError(
      "no SEARCH/REPLACE block found; write <<<<<<< SEARCH, the exact lines, =======, the new lines, >>>>>>> REPLACE",
    );
  }
  return blocks;
}

/**
 * Applies SEARCH/REPLACE blocks in order, all or nothing. Each SEARCH text must match exactly once inside an
 * editable region; a match that touches frozen code is refused with the lines it would have changed.
 */
export function applySearchReplace(program: string, editText: string): string {
  let current = program;
  parseSearchReplace(editText).forEach((b, i) => {
    const label = `SEARCH block ${i + 1}`;
    if (b.search.trim().length === 0) throw new EditError(`${label} is empty`);
    const regions = findRegions(current);
    let at = current.indexOf(b.search);
    if (at < 0)
      throw new EditError(
        `${label} does not match the program exactly (check whitespace and indentation; view_program shows the current text)`,
      );
    let inside: Region | undefined;
    let firstOutside: number | undefined;
    while (at >= 0) {
      const end = at + b.search.length;
      inside = regions.find((r) => at >= r.start && end <= r.end);
      if (inside) break;
      firstOutside ??= at;
      at = current.indexOf(b.search, at + 1);
    }
    if (!inside) {
      const from = lineOf(current, firstOutside ?? 0);
      const to = lineOf(current, (firstOutside ?? 0) + b.search.length);
      const r0 = regions[0] as Region;
      throw new EditError(
        `${label} matches lines ${from}-${to}, outside the editable region (lines ${r0.startLine}-${r0.endLine}); only code between the EVOLVE-BLOCK markers may change`,
      );
    }
    const edited = current.slice(0, at) + b.replace + current.slice(at + b.search.length);
    assertFrozenUnchanged(current, edited);
    current = edited;
  });
  assertFrozenUnchanged(program, current);
  return current;
}
