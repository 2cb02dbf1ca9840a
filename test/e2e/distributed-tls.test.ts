import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openDb } from "../../src/store/db.ts";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { freePort, started, stopped } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// --queue rediss://: a Redis reached over TLS, as hosted Redis services (and any Redis across an untrusted network)
// are. The server's certificate is checked as Node checks any: against the host the URL names, by the CAs Node trusts
// and those NODE_EXTRA_CA_CERTS adds. This file's Redis serves a self-signed certificate (test/fixtures/tls), which
// only the processes given it as their CA accept.

const TLS = join(ROOT, "test", "fixtures", "tls");
const CA = { NODE_EXTRA_CA_CERTS: join(TLS, "server-cert.pem") };
let port = 0;
let redis: ChildProcess | undefined;
/** Why the TLS Redis could not be started (a redis-server built without TLS), when it could not. */
let noTls = "";
const url = (user = "") => `rediss://${user}127.0.0.1:${port}`;

beforeAll(async () => {
  if (missing("redis-server")) return;
  port = await freePort();
  const tls = ["--tls-port", String(port), "--tls-cert-file", join(TLS, "server-cert.pem")];
  const key = ["--tls-key-file", join(TLS, "server-key.pem"), "--tls-auth-clients", "no"];
  const args = ["--port", "0", ...tls, ...key, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  try {
    redis = await started("redis-server", [...args, "--user", "worker", "on", ">pw", "~*", "&*", "+@all"], /Ready to accept/);
  } catch (err) {
    noTls = `this redis-server cannot serve TLS (${(err as Error).message}); Debian's and Homebrew's can`;
  }
});

beforeEach((ctx) => {
  requireTool(ctx, "redis-server");
  if (noTls) ctx.skip(noTls);
});

afterAll(async () => {
  if (redis) await stopped(redis);
});

describe("rediss:// queue URLs", () => {
  it("hone doctor --queue says a certificate this machine does not trust, and what to do (exit 6)", async () => {
    const r = await hone(["doctor", "--queue", url(), "--json"]);
    expect(r.code).toBe(6);
    const queue = JSON.parse(r.stdout).checks.find((c: { id: string }) => c.id === "queue");
    expect(queue.found).toMatch(/cannot connect \(DEPTH_ZERO_SELF_SIGNED_CERT: .*\); .*NODE_EXTRA_CA_CERTS/);
  });

  it("hone doctor --queue answers with the CA given, as the URL's ACL user, and says a refused password", async () => {
    const checked = async (u: string) => {
      const r = await hone(["doctor", "--queue", u, "--json"], { env: CA });
      return { code: r.code, found: JSON.parse(r.stdout).checks.find((c: { id: string }) => c.id === "queue").found };
    };
    expect(await checked(url("worker:pw@"))).toEqual({ code: 0, found: `${url("worker:***@")} answers` });
    const wrong = await checked(url("worker:nope@"));
    expect(wrong.code).toBe(6);
    expect(wrong.found).toMatch(/it refused: WRONGPASS/);
    expect(wrong.found).not.toContain("nope");
    expect((await checked(`${url()}/99999`)).found).toMatch(/it refused: ERR DB index is out of range/);
  });

  it("runs hone optimize's rollouts on a hone worker over TLS", { timeout: 180_000 }, async () => {
    const worker = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), "worker", "--queue", url("worker:pw@")], {
      cwd: ROOT,
      env: { ...process.env, ...CA },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let said = "";
    worker.stdout.on("data", (d) => (said += d));
    worker.stderr.on("data", (d) => (said += d));
    try {
      const out = join(tempDir(), "tls-run");
      const args = optimizeArgs({ rounds: 1, proposals: 2, maxEvals: 2, seed: 1 });
      const r = await hone([...args, "--queue", url("worker:pw@"), "--out", out], { env: CA, timeoutMs: 170_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(said).toMatch(/ ready on rediss:\/\/worker:\*\*\*@127\.0\.0\.1:/);
      expect(said).toMatch(/ runs r01-/); // the worker ran the round's rollouts
      const db = openDb(join(out, "hone.db"), { readonly: true });
      try {
        expect((db.prepare("SELECT COUNT(*) AS n FROM rollouts").get() as { n: number }).n).toBe(3);
      } finally {
        db.close();
      }
    } finally {
      await stopped(worker);
    }
  });
});
