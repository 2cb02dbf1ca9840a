/**
 * Errors a user can meet, each with the exit code the CLI returns for it. The message names the file, field or URL
 * and says what to do. Documented in the README's "Exit codes" table; keep the two in step.
 */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  badHarness: 3,
  badTask: 4,
  badConfig: 5,
  endpoint: 6,
  runFailed: 7,
  evaluatorFailed: 8,
  incomplete: 9,
} as const;
export type ExitCodeName = keyof typeof ExitCode;

export class HoneError extends Error {
  readonly exit: ExitCodeName;
  readonly file?: string;
  readonly field?: string;
  constructor(exit: ExitCodeName, message: string, where: { file?: string; field?: string } = {}) {
    // A field already in parentheses ("(top level)") is not wrapped twice.
    const field = where.field?.startsWith("(") ? ` ${where.field}` : where.field ? ` (${where.field})` : "";
    const prefix = where.file ? `${where.file}${field}: ` : "";
    super(prefix + message);
    this.name = "HoneError";
    this.exit = exit;
    this.file = where.file;
    this.field = where.field;
  }
}

export const harnessError = (file: string, field: string | undefined, message: string) =>
  new HoneError("badHarness", message, { file, field });
export const taskError = (file: string, field: string | undefined, message: string) =>
  new HoneError("badTask", message, { file, field });
export const configError = (file: string, field: string | undefined, message: string) =>
  new HoneError("badConfig", message, { file, field });

/** Formats zod issues as `field: message` lines, the field written as a dotted path. */
export function zodIssues(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
): { field: string; message: string }[] {
  return issues.map((i) => ({ field: i.path.map(String).join(".") || "(top level)", message: i.message }));
}
