import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BENCHMARKS, loadSplit } from "../../src/task/qa/benchmarks.ts";
import { fetchBenchmark } from "../../src/task/qa/fetch.ts";
import { readJsonl } from "../../src/task/qa/readers.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const GSM_ROW = JSON.stringify({ question: "q", answer: "work\n#### 5" });

/** A gsm8k data folder whose train file is real and whose test file is made by `make`. */
function gsmFolder(make: (testFile: string) => void): string {
  const root = tempDir("hone-qa-probe4-");
  mkdirSync(join(root, "gsm8k"));
  writeFileSync(join(root, "gsm8k", "train.jsonl"), `${GSM_ROW}\n`);
  make(join(root, "gsm8k", "test.jsonl"));
  return root;
}

/**
 * A FIFO at `path`, with a writer that sends one line after a moment and gives up after a few seconds: were a
 * reader to open it blocking, it would get the line and go on (so the test fails instead of hanging). The writer is
 * its own process group, and stopping it kills the whole group: `timeout` alone killed would leave its `sh` waiting
 * on the FIFO for a reader that never comes.
 */
function fifoWithLateWriter(path: string, line: string) {
  spawnSync("mkfifo", [path]);
  const writer = spawn("timeout", ["5", "sh", "-c", 'sleep 1; printf "%s\\n" "$1" > "$2"', "sh", line, path], {
    stdio: "ignore",
    detached: true,
  });
  // No `timeout` or `sh` on the machine: the FIFO stays without a writer, which the refusal does not need.
  writer.on("error", () => {});
  return () => {
    if (writer.pid === undefined || writer.exitCode !== null || writer.signalCode !== null) return;
    try {
      process.kill(-writer.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
}

describe("dataset files that are not regular files are refused, never read", () => {
  it("a FIFO as a dataset file: refused naming it, without waiting for a writer", async () => {
    let stop = () => {};
    const root = gsmFolder((f) => {
      stop = fifoWithLateWriter(f, GSM_ROW);
    });
    try {
      await expect(loadSplit("gsm8k", "test", { dir: root })).rejects.toThrow(/test\.jsonl is a FIFO, not a dataset file/);
    } finally {
      stop();
    }
  });

  it("a symlink to a device (/dev/null) is refused; a symlink to a regular file reads", async () => {
    const dev = gsmFolder((f) => symlinkSync("/dev/null", f));
    await expect(loadSplit("gsm8k", "test", { dir: dev })).rejects.toThrow(/test\.jsonl is a device, not a dataset file/);
    const linked = gsmFolder((f) => {
      const real = join(tempDir("hone-qa-probe4-real-"), "rows.jsonl");
      writeFileSync(real, `${GSM_ROW}\n${GSM_ROW}\n`);
      symlinkSync(real, f);
    });
    expect(await loadSplit("gsm8k", "test", { dir: linked })).toHaveLength(2);
  });

  it("a directory in a dataset file's place is named as one", async () => {
    const dir = gsmFolder((f) => mkdirSync(f));
    await expect(loadSplit("gsm8k", "test", { dir })).rejects.toThrow(/test\.jsonl is a directory, not a dataset file/);
  });

  it("BFCL's possible-answer file as a FIFO is refused the same way", async () => {
    const root = tempDir("hone-qa-probe4-bfcl-");
    cpSync(join(ROOT, "test/fixtures/datasets/bfcl-simple"), join(root, "bfcl-simple"), { recursive: true });
    const answers = join(root, "bfcl-simple", "possible_answer", "BFCL_v3_simple.json");
    rmSync(answers);
    const stop = fifoWithLateWriter(answers, "");
    try {
      await expect(Promise.resolve().then(() => BENCHMARKS["bfcl-simple"]?.load(join(root, "bfcl-simple")))).rejects.toThrow(
        /BFCL_v3_simple\.json is a FIFO, not a dataset file/,
      );
    } finally {
      stop();
    }
  });

  it("a FIFO where `hone datasets fetch` looks for recorded sha256s is refused before any download", async () => {
    const root = tempDir("hone-qa-probe4-fetch-");
    mkdirSync(join(root, "hotpotqa"));
    const stop = fifoWithLateWriter(join(root, "hotpotqa", "SHA256SUMS"), "");
    try {
      const err = await fetchBenchmark(BENCHMARKS.hotpotqa as never, root, {}).catch((e: Error) => e);
      // SHA256SUMS is written by `--record`, not downloaded: its refusal says so, not "put the downloaded file there".
      expect((err as Error).message).toBe(
        `${join(root, "hotpotqa", "SHA256SUMS")} is a FIFO, not the list of recorded sha256s; remove it, then run \`hone datasets fetch hotpotqa --record\` to record them again`,
      );
    } finally {
      stop();
    }
  });
});

describe("JSON Lines: line numbers count every line, a long line included", () => {
  it("names the malformed line after a 16 MB line, blank lines and CRLF endings", () => {
    const file = join(tempDir("hone-qa-probe4-lines-"), "test.jsonl");
    const long = JSON.stringify({ question: "x".repeat(16 * 1024 * 1024), answer: "#### 1" });
    writeFileSync(file, `${long}\r\n\r\n${GSM_ROW}\r\n{"question": "q",\r\n${GSM_ROW}\n`);
    expect(() => readJsonl(file)).toThrow(/test\.jsonl:4: not valid JSON/);
    writeFileSync(file, `${long}\r\n\n${GSM_ROW}`);
    expect(readJsonl(file).map((r) => String(r.question).length)).toEqual([16 * 1024 * 1024, 1]);
  });

  it("a multi-byte character split nowhere: UTF-8 rows read exactly", () => {
    const file = join(tempDir("hone-qa-probe4-utf8-"), "test.jsonl");
    writeFileSync(file, `${JSON.stringify({ q: "Peña – 𝔸 ✓" })}\n${JSON.stringify({ q: "中文" })}`);
    expect(readJsonl(file).map((r) => r.q)).toEqual(["Peña – 𝔸 ✓", "中文"]);
  });
});
