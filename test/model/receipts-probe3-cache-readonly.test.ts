import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ResponseStore } from "../../src/model/cache.ts";
import type { ChatResponse } from "../../src/model/types.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// Before: `--cache replay` (which only reads the shared cache) refused a cache folder it could not write, a read-only
// mount or another user's cache: "the request cache … cannot be opened for writing (unable to open database file)".
//
// The folder is shown read-only by a read-only bind mount in a mount namespace of a child process's own (`unshare -rm`,
// util-linux): file modes would not do, as root writes anything, and a mount made on the host would outlive a crash.

const answer: ChatResponse = {
  message: { content: "recorded", tool_calls: [] },
  finish_reason: "stop",
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  latency_ms: 5,
  attempts: 1,
  model: "m",
};

// Run in the child, where `view` is the cache folder mounted read-only: what each way of opening it did.
const CHILD = `
import { ResponseStore } from ${JSON.stringify(join(ROOT, "src/model/cache.ts"))};
import { Recording } from ${JSON.stringify(join(ROOT, "src/loop/recording.ts"))};
const [view, run1, run2] = process.argv.slice(-3);
const out = {};
const attempt = (name, f) => { try { out[name] = f(); } catch (e) { out[name] = "threw: " + e.message; } };
attempt("readonlyStore", () => {
  const said = [];
  const store = new ResponseStore(view + "/requests.db", (t) => said.push(t), { readonly: true });
  const r = { k1: store.get("k1")?.message.content ?? null, k2: store.get("k2") ?? null, said };
  store.close();
  return r;
});
attempt("replay", () => { new Recording(run1, { cache: { mode: "replay", dir: view } }).close(); return "opened"; });
attempt("readWrite", () => { new Recording(run2, { cache: { mode: "read-write", dir: view } }).close(); return "opened"; });
attempt("writable", () => { new ResponseStore(view + "/requests.db").put("k3", "m", ${JSON.stringify(answer)}); return "wrote"; });
process.stdout.write(JSON.stringify(out));
`;

/** What CHILD says with `dir` bind-mounted read-only at a fresh folder, in a mount namespace of its own. */
function throughReadOnlyMount(dir: string): Record<string, unknown> | string {
  const view = join(tempDir(), "ro");
  mkdirSync(view);
  const mountThenRun = 'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && shift 2 && exec "$@"';
  const r = spawnSync(
    "unshare",
    [
      "-rm",
      "--propagation",
      "private",
      "sh",
      "-c",
      mountThenRun,
      "sh",
      dir,
      view,
      process.execPath,
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      CHILD,
      view,
      tempDir(),
      tempDir(),
    ],
    { cwd: ROOT, encoding: "utf8", timeout: 120_000 },
  );
  if (r.status !== 0) return `unshare -rm and a read-only bind mount failed (${r.status}): ${r.error ?? r.stderr}`;
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe("a shared request cache that may only be read (a read-only mount)", () => {
  it("serves --cache replay, and is still refused, naming it, by a run that would write to it", (ctx) => {
    requireTool(ctx, "namespaces");
    const dir = tempDir();
    const s = new ResponseStore(join(dir, "requests.db"));
    s.put("k1", "m", answer);
    s.close();
    const seen = throughReadOnlyMount(dir);
    if (typeof seen === "string") return requireTool(ctx, "namespaces", seen);
    // The mount is read-only indeed (a store opened for writing cannot write there).
    expect(seen.writable).toMatch(/^threw: /);
    expect(seen.readonlyStore).toEqual({ k1: "recorded", k2: null, said: [] });
    expect(seen.replay).toBe("opened");
    expect(seen.readWrite).toMatch(/^threw: the request cache .*requests\.db cannot be opened for writing/);
  });
});
