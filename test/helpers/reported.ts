// What `reportError` (hone's last line) writes to stderr for an error, and the exit code it returns.
import { vi } from "vitest";
import { reportError } from "../../src/cli/output.ts";

export function reportedError(err: unknown): { text: string; code: number } {
  let text = "";
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  });
  try {
    return { code: reportError(err), text };
  } finally {
    spy.mockRestore();
  }
}
