import { afterEach, describe, expect, it, vi } from "vitest";
import { HoneError } from "../../src/errors.ts";
import { ModelError } from "../../src/model/errors.ts";
import { reportedError } from "../helpers/reported.ts";

// hone's last line, `hone: <message>`, quotes what a program, a server or a package wrote (a method program's
// stderr, an endpoint's error text, a file name): it must never reach the terminal raw.

describe("reportError escapes what others wrote", () => {
  afterEach(() => vi.restoreAllMocks());

  it("writes a HoneError's control characters as escapes, keeping its lines and exit code", () => {
    const { text, code } = reportedError(new HoneError("runFailed", "the method m exited with code 1: \x1b[2J\rVALID\nnext"));
    expect(text).not.toMatch(/[\x1b\r]/);
    expect(text).toContain("\\u001b[2J\\u000dVALID\nnext");
    expect(code).toBe(7);
  });

  it("escapes a model error's text and an internal error's stack", () => {
    expect(
      reportedError(new ModelError("unreachable", "down \x07\x1b]0;title\x07", { url: "http://127.0.0.1:9/v1" })).text,
    ).not.toMatch(/[\x07\x1b]/);
    expect(reportedError(new Error("boom \x1b[31m")).text).toContain("\\u001b[31m");
  });
});

describe("a config error at the top level", () => {
  it("names the place once, in one pair of parentheses", () => {
    expect(new HoneError("badConfig", 'Unrecognized key: "roundz"', { file: "bad.yaml", field: "(top level)" }).message).toBe(
      'bad.yaml (top level): Unrecognized key: "roundz"',
    );
    expect(new HoneError("badConfig", "is missing", { file: "bad.yaml", field: "rounds" }).message).toBe(
      "bad.yaml (rounds): is missing",
    );
  });
});
