// Third attacker's probe (issue 12): the final line of a generated Python tool's call comes from the tool's own
// process (it holds the descriptor the relay reads), so a tool past the gate could write any "done" line. hone took
// it as it came: {"done": {"ok": true}} made the rollout's tool call throw a TypeError (no value to print), a value
// nested 300,000 deep threw a RangeError when printed, and a `null` line threw out of the stream's data handler.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { pythonToolOutput } from "../../src/sandbox/python-tool-host.ts";
import { type PythonToolDone, runPythonTool, type ToolChannelSource } from "../../src/task/tool-channel.ts";

/** A channel whose tool side answers the request with `lines` (what a tool's process could write). */
function scripted(lines: string[]): ToolChannelSource {
  return {
    open() {
      const input = new PassThrough();
      const output = new PassThrough();
      output.once("data", () => input.write(lines.map((l) => `${l}\n`).join("")));
      return { input, output, close: () => input.destroy() };
    },
  };
}

const call = { code: "def run(ctx, args):\n    return 1\n", args: {}, timeoutSec: 5, cpuSeconds: 1, memoryMb: 256 };
const run = (lines: string[]): Promise<PythonToolDone> => runPythonTool(scripted(lines), call, async () => null);
const malformed = { ok: false, kind: "protocol", error: "the tool's process sent a malformed result" };

describe("a tool's final line", () => {
  it("is taken when it is what hone_tool_runner writes", async () => {
    expect(await run(['{"done": {"ok": true, "value": [1, {"a": null}]}}'])).toEqual({ ok: true, value: [1, { a: null }] });
    expect(await run(['{"done": {"ok": true, "value": null}}'])).toEqual({ ok: true, value: null });
    expect(await run(['{"done": {"ok": false, "kind": "cpu", "error": "too long"}}'])).toEqual({
      ok: false,
      kind: "cpu",
      error: "too long",
    });
  });

  it.each([
    ["no value", '{"done": {"ok": true}}'],
    ["a done that is no object", '{"done": 1}'],
    ["a done of null", '{"done": null}'],
    ["an error that is no string", '{"done": {"ok": false, "kind": "error", "error": {"x": 1}}}'],
    ["a kind that is no string", '{"done": {"ok": false, "kind": ["cpu"], "error": "x"}}'],
    ["ok that is no boolean", '{"done": {"ok": "yes", "value": 1}}'],
    ["a value nested 300,000 deep", `{"done": {"ok": true, "value": ${"[".repeat(300_000)}${"]".repeat(300_000)}}}`],
  ])("is a protocol failure with %s", async (_what, line) => {
    const done = await run([line]);
    expect(done).toEqual(malformed);
  });

  it("is a protocol failure when the line is JSON null, not a throw out of the stream", async () => {
    const done = await run(["null"]);
    expect(done).toMatchObject({ ok: false, kind: "protocol" });
  });

  it("that is taken can always be printed for the executor", async () => {
    const done = await run(['{"done": {"ok": true, "value": {"k": [[[[1]]]]}}}']);
    expect(done.ok && pythonToolOutput(done.value)).toBe('{"k":[[[[1]]]]}');
  });
});
