// Texts from untrusted sources (a package's file names and values, a proposer's keys) made safe to print: control
// characters written out as escapes, so they can neither drive a terminal nor start a line of their own. Imported by
// the CLI at start, so it holds no schema library; imports nothing of hone's.

/**
 * C0 and C1 control characters other than tab, line feed, carriage return and NEL (U+0085, which mis-decoded text
 * holds) (ESC, NUL, BEL…). A prompt, a skill or
 * generated code never needs one raw (code writes "\x1b"), and a proposer's text is printed by `hone log`, `hone
 * diff` and commit messages, where ESC sequences would drive the user's terminal.
 */
export const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u0084\u0086-\u009F]/;

/** A text with its control characters written as \uXXXX: a refusal names a proposer's key without printing it raw. */
export const printable = (s: string) =>
  s.replace(new RegExp(CONTROL.source, "g"), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * A text to print as one line of a report: control characters written as \uXXXX, line breaks (CR, LF, NEL, U+2028/9)
 * too, so a package's file name or value can neither drive a terminal nor start a line of its own ("accepted").
 */
export const oneLine = (s: string) =>
  printable(s).replace(/[\r\n\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * A text to print with its own lines kept: control characters written as \uXXXX but tab and line feed, so a carriage
 * return cannot overwrite a printed line and an escape sequence cannot drive a terminal (an evaluator's or a
 * program's text, a failed cell's error).
 */
export const printableText = (s: string) =>
  printable(s).replace(/[\r\u0085]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
