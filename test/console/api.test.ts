import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunRegistry } from "../../src/console/runs.ts";
import { consoleApp, startConsole } from "../../src/console/server.ts";
import { openDb } from "../../src/store/db.ts";
import { setMethodKeep } from "../../src/store/method-state.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

const root = tempDir("hone-console-");
const outside = tempDir("hone-console-outside-");
let registry: RunRegistry;
const HOST = { host: "127.0.0.1:4460" };

async function get(app: ReturnType<typeof consoleApp>, path: string, headers: Record<string, string> = HOST) {
  const r = await app.request(path, { headers });
  const text = await r.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: r.status, text, json: json as Record<string, unknown> & { items?: unknown[] }, headers: r.headers };
}

beforeAll(async () => {
  await writeSyntheticRun(join(root, "alpha"), { rounds: 3, perRound: 3, refuseEvery: 4 });
  await writeSyntheticRun(join(root, "group", "beta"), { rounds: 2, perRound: 2 });
  const beta = openDb(join(root, "group", "beta", "hone.db"));
  setMethodKeep(beta, "run", "r02-k0", "gepa", { keep: true, rule: "minibatch", reason: "1.2 > 1.0 on the minibatch" });
  setMethodKeep(beta, "run", "r02-k1", "gepa", { keep: false, rule: "minibatch", reason: "0.9 <= 1.0" });
  beta.close();
  await writeSyntheticRun(join(root, "gamma"), { rounds: 1, perRound: 2, status: "running" });
  writeFileSync(join(root, "alpha", "best_program.py"), "print('best')\n");
  mkdirSync(join(root, "alpha", "rollouts", "r01-k0", "programs"), { recursive: true });
  writeFileSync(join(root, "alpha", "rollouts", "r01-k0", "programs", "0001.py"), "x = 1\ny = 2\n");
  writeFileSync(join(root, "alpha", "rollouts", "r01-k0", "programs", "0002.py"), "x = 1\ny = 3\n");
  writeFileSync(
    join(root, "alpha", "rollouts", "r01-k0", "trajectory.jsonl"),
    `${Array.from({ length: 7 }, (_, i) => JSON.stringify({ t: i, type: "message", iteration: 0, role: "user", content: `m${i}` })).join("\n")}\n`,
  );
  writeFileSync(join(outside, "secret.txt"), "do not serve\n");
  symlinkSync(join(outside, "secret.txt"), join(root, "alpha", "link-out.txt"));
  registry = new RunRegistry(root, 0);
});

afterAll(() => registry.close());

describe("console API", () => {
  it("lists run directories at any depth, a page at a time", async () => {
    const app = consoleApp(registry, { root });
    const all = await get(app, "/api/runs");
    expect(all.json.total).toBe(3);
    expect((all.json.items as { id: string }[]).map((r) => r.id)).toEqual(["alpha", "gamma", "group/beta"]);
    const page = await get(app, "/api/runs?offset=1&limit=1");
    expect((page.json.items as { id: string; status: string }[]).map((r) => [r.id, r.status])).toEqual([["gamma", "running"]]);
    expect((await get(app, "/api/runs?limit=0")).status).toBe(400);
    expect((await get(app, "/api/runs?offset=-1")).status).toBe(400);
    expect((await get(app, "/api/runs?limit=abc")).status).toBe(400);
  });

  it("gives the run page: rounds, the curve's columns, costs; candidates a page at a time with their parents", async () => {
    const app = consoleApp(registry, { root });
    const r = await get(app, `/api/runs/${encodeURIComponent("group/beta")}`);
    expect(r.status).toBe(200);
    const data = r.json as {
      rounds: unknown[];
      candidates_total: number;
      curve: { round: number[]; slot: number[]; score: (number | null)[]; kind: number[] };
      direction: string;
      rollouts: number;
      method?: string;
    };
    expect(data.rounds).toHaveLength(3);
    expect(data.candidates_total).toBe(5);
    expect(data.curve.round).toHaveLength(5);
    expect(data.curve.kind.filter((k) => k === 1)).toHaveLength(4);
    expect(data.direction).toBe("maximize");
    expect(data.rollouts).toBe(5);
    const page = await get(app, `/api/runs/${encodeURIComponent("group/beta")}/candidates?limit=3`);
    const items = page.json.items as { id: string; parent: string | null; score: number | null }[];
    expect(page.json.total).toBe(5);
    expect(items.map((c) => c.id)).toEqual(["r02-k0", "r02-k1", "r01-k0"]);
    expect(items.find((c) => c.id === "r02-k1")?.parent).toBe("r00-seed");
    // The method's own keep decision beside hone's records; none for a candidate the method has not decided.
    const decisions = (page.json.items as { id: string; method_decision: unknown }[]).map((c) => [c.id, c.method_decision]);
    expect(decisions).toEqual([
      ["r02-k0", { kept: true, rule: "minibatch", reason: "1.2 > 1.0 on the minibatch" }],
      ["r02-k1", { kept: false, rule: "minibatch", reason: "0.9 <= 1.0" }],
      ["r01-k0", null],
    ]);
    expect(String(data.method ?? "")).toMatch(/^optimize · harnessttt/);
    const rest = await get(app, `/api/runs/${encodeURIComponent("group/beta")}/candidates?offset=3&limit=3`);
    const seed = (rest.json.items as { id: string; parent: string | null; score: number | null }[]).at(-1);
    expect(seed).toMatchObject({ id: "r00-seed", parent: null, score: 1 });
    const rollouts = await get(app, "/api/runs/alpha/rollouts?offset=2&limit=3");
    expect(rollouts.json.total).toBe(8);
    expect(rollouts.json.items).toHaveLength(3);
  });

  it("shows a candidate's files, its gate verdict, and a diff against its parent or another candidate", async () => {
    const app = consoleApp(registry, { root });
    const c = await get(app, "/api/runs/alpha/candidates/r01-k0");
    expect(c.json.files).toEqual(["agent.yaml", "prompt.md"]);
    const file = await get(app, "/api/runs/alpha/candidates/r01-k0/file?path=prompt.md");
    expect(file.json.content).toMatch(/Version 2/);
    const diff = await get(app, "/api/runs/alpha/diff?b=r01-k0");
    expect(diff.json.a).toBe("r00-seed");
    expect(diff.json.diff).toMatch(
      /-You search for better programs\. Version 0\.\n\+You search for better programs\. Version 2\./,
    );
    const other = await get(app, "/api/runs/alpha/diff?a=r02-k0&b=r01-k0");
    expect(other.json.diff).toMatch(/Version 1\.\n\+.*Version 2\./);
    const gate = await get(app, "/api/runs/alpha/candidates/r02-k2");
    expect(gate.json).toMatchObject({ status: "invalid", gate_error: "spec: unknown key 'foo'", files: [] });
    expect((await get(app, "/api/runs/alpha/diff?b=r02-k2")).status).toBe(404);
  });

  it("pages a trajectory and diffs consecutive programs", async () => {
    const app = consoleApp(registry, { root });
    const t = await get(app, "/api/runs/alpha/rollouts/r01-k0/trajectory?offset=5&limit=10");
    expect(t.json.total).toBe(7);
    expect((t.json.events as { content: string }[]).map((e) => e.content)).toEqual(["m5", "m6"]);
    const d = await get(app, "/api/runs/alpha/rollouts/r01-k0/program-diff?from=1&to=2");
    expect(d.json.diff).toMatch(/-y = 2\n\+y = 3/);
    const detail = await get(app, "/api/runs/alpha/rollouts/r01-k0");
    expect((detail.json.evaluations as unknown[]).length).toBe(10);
  });

  it("never serves a file outside the run folder", async () => {
    const app = consoleApp(registry, { root });
    expect((await get(app, "/api/runs/alpha/artifact?path=best_program.py")).text).toBe("print('best')\n");
    for (const path of [
      "../gamma/hone.db",
      "../../etc/passwd",
      "/etc/passwd",
      "rollouts/../../gamma/hone.db",
      "link-out.txt",
      "best_program.py\0.png",
      "",
      ".",
    ])
      expect((await get(app, `/api/runs/alpha/artifact?path=${encodeURIComponent(path)}`)).status, path).toBe(404);
    expect((await get(app, "/api/runs/..%2F..%2Fetc/artifact?path=passwd")).status).toBe(404);
    expect((await get(app, "/api/runs/alpha/rollouts/..%2F..%2Fgamma/program-diff?from=1&to=2")).status).toBe(404);
    expect((await get(app, "/api/runs/alpha/rollouts/..%2F..%2F..%2Fetc/trajectory")).status).toBe(404);
    expect((await get(app, "/api/runs/alpha/candidates/r01-k0/file?path=..%2Fhone.db")).status).toBe(404);
    expect((await get(app, "/api/runs/alpha/candidates/r01-k0/file?path=HEAD%3Aprompt.md")).status).toBe(404);
    expect((await get(app, "/api/runs/alpha/rollouts/..%2F..%2Fgamma/trajectory")).status).toBe(404);
    // The pages' static route never hands out hone's own files, however the path is spelled.
    for (const path of [
      "/assets/..%2F..%2F..%2F..%2Fpackage.json",
      "/assets/../../server.ts",
      "/assets/%2e%2e/%2e%2e/server.ts",
    ]) {
      const r = await get(app, path);
      expect(r.text, path).not.toMatch(/devDependencies|consoleApi/);
    }
  });

  it("answers only to loopback Host names without a token, and only with the token otherwise", async () => {
    const open = consoleApp(registry, { root });
    expect((await get(open, "/api/runs", { host: "attacker.example:4460" })).status).toBe(403);
    expect((await get(open, "/api/runs", { host: "localhost:4460" })).status).toBe(200);
    const token = "s3cret-token-of-some-length";
    const shut = consoleApp(registry, { root, token });
    expect((await get(shut, "/api/runs")).status).toBe(401);
    expect((await get(shut, "/api/runs", { authorization: "Bearer wrong-token-of-the-same-len" })).status).toBe(401);
    expect((await get(shut, "/api/runs", { authorization: `Bearer ${token}` })).status).toBe(200);
    const login = await get(shut, `/run/alpha?token=${token}`);
    expect(login.status).toBe(302);
    expect(login.headers.get("location")).toBe("/run/alpha");
    const cookie = login.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/HttpOnly/i);
    expect((await get(shut, "/api/runs", { cookie: cookie.split(";")[0] as string })).status).toBe(200);
    expect((await get(shut, "/run/alpha?token=nope")).status).toBe(401);
  });

  it("gives each console's token a cookie of its own: two consoles on one host do not sign each other out", async () => {
    // A browser keeps cookies per host, not per port: under one name, opening the second console replaced the first's.
    const [a, b] = ["first-console-token-0123", "second-console-token-456"];
    const [first, second] = [consoleApp(registry, { root, token: a }), consoleApp(registry, { root, token: b })];
    const cookieOf = async (app: typeof first, token: string) =>
      ((await get(app, `/?token=${token}`)).headers.get("set-cookie") ?? "").split(";")[0] as string;
    const [ca, cb] = [await cookieOf(first, a), await cookieOf(second, b)];
    expect(ca.split("=")[0]).not.toBe(cb.split("=")[0]);
    // The browser sends both cookies to either console; each finds its own.
    expect((await get(first, "/api/runs", { cookie: `${ca}; ${cb}` })).status).toBe(200);
    expect((await get(second, "/api/runs", { cookie: `${cb}; ${ca}` })).status).toBe(200);
    expect((await get(second, "/api/runs", { cookie: ca })).status).toBe(401);
  });

  it("refuses to bind beyond loopback without a token, or with a short one", async () => {
    await expect(startConsole({ root, host: "0.0.0.0", port: 0 })).rejects.toThrow(/--token-file/);
    await expect(startConsole({ root, host: "0.0.0.0", port: 0, token: "short" })).rejects.toThrow(/at least 16/);
  });

  it("notices a run folder deleted and made again under the same name", async () => {
    const app = consoleApp(registry, { root });
    const dir = join(root, "again");
    await writeSyntheticRun(dir, { rounds: 1, perRound: 1 });
    expect(((await get(app, "/api/runs/again")).json.rounds as unknown[]).length).toBe(2);
    rmSync(dir, { recursive: true, force: true });
    expect((await get(app, "/api/runs/again")).status).toBe(404);
    await writeSyntheticRun(dir, { rounds: 3, perRound: 1 });
    expect(((await get(app, "/api/runs/again")).json.rounds as unknown[]).length).toBe(4);
    rmSync(dir, { recursive: true, force: true });
  });
});
