// The valid name a misspelled one most likely meant (a config file's field: `timout` for `timeout`), for refusals and
// notes that say what to write instead. Imports nothing of hone's.

/**
 * Edit distance between two short names, a swap of two neighbours counting as one edit as typos make them (optimal
 * string alignment; three rows at a time).
 */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] ?? 0, (before[j - 2] ?? 0) + 1);
    }
    before = prev;
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/**
 * The name of `names` that `word` most likely meant: case, '_' and '-' aside, within a third of that name's length
 * (at least one edit); none when no name is that close.
 */
export function nearestName(word: string, names: readonly string[]): string | undefined {
  const plain = (s: string) => s.toLowerCase().replace(/[_-]/g, "");
  const w = plain(word).slice(0, 200);
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = editDistance(w, plain(name));
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(1, Math.floor(best.name.length / 3)) ? best.name : undefined;
}
