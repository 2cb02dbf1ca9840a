export interface Leak {
  file: string;
  what: string;
}

const MIN_LINE = 30;

/**
 * Text and code a harness carries may not contain an evaluator's source, hidden task data or anything a task marks
 * secret. A secret is matched whole; a source file is matched line by line (any line of 30+ characters found
 * verbatim in the harness is a leak), so pasting parts of an evaluator is caught too.
 */
export function findLeaks(
  harnessFiles: readonly { file: string; text: string }[],
  secrets: readonly { name: string; text: string }[],
): Leak[] {
  const leaks: Leak[] = [];
  for (const secret of secrets) {
    const lines = secret.text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l.length >= MIN_LINE);
    for (const f of harnessFiles) {
      if (secret.text.trim().length > 0 && f.text.includes(secret.text.trim())) {
        leaks.push({ file: f.file, what: `contains ${secret.name}` });
        continue;
      }
      const hit = lines.find((l) => f.text.includes(l));
      if (hit)
        leaks.push({
          file: f.file,
          what: `contains a line of ${secret.name}: "${hit.slice(0, 60)}${hit.length > 60 ? "…" : ""}"`,
        });
    }
  }
  return leaks;
}
