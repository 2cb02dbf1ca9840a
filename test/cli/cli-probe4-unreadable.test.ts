import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tempDir } from "../helpers/fixtures.ts";
import { reportedError } from "../helpers/reported.ts";

// A file-system refusal is said by what failed: a file hone only reads that cannot be opened wants its permissions
// checked (another output folder is no help); a place hone writes keeps "or choose a folder you can write".

/** An error shaped as Node's fs calls throw it. */
const fsError = (code: string, syscall: string, path?: string) =>
  Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, errno: -13, ...(path ? { path } : {}) });

describe("a refused file-system call's advice follows the call", () => {
  afterEach(() => vi.restoreAllMocks());

  it("an open that fails on a file that is there (a read) says to check its permissions, not to choose a folder", () => {
    const file = join(tempDir("hone-cli4-read-"), "tasks.jsonl");
    writeFileSync(file, "{}\n");
    const { text, code } = reportedError(fsError("EACCES", "open", file));
    expect(code).toBe(2);
    expect(text).toBe(`hone: ${file} cannot be opened (EACCES: permission denied); check its permissions\n`);
    expect(text).not.toContain("folder you can write");
  });

  it("a failed read says the file cannot be read, with the same advice", () => {
    const { text, code } = reportedError(fsError("EPERM", "read"));
    expect(code).toBe(2);
    expect(text).toContain("cannot be read (EPERM: not permitted); check its permissions");
    expect(text).not.toContain("folder you can write");
  });

  it("an open that fails on a path not there yet (a file being made) and a mkdir keep the folder advice", () => {
    const dir = tempDir("hone-cli4-write-");
    for (const err of [fsError("EACCES", "open", join(dir, "new.json")), fsError("EROFS", "mkdir", join(dir, "out"))]) {
      const { text, code } = reportedError(err);
      expect(code).toBe(2);
      expect(text).toContain(`${err.path} cannot be written (`);
      expect(text).toContain("; check its permissions, or choose a folder you can write");
    }
  });
});
