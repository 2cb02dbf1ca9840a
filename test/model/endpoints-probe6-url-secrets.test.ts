import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { storedSettings } from "../../src/loop/optimize.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import { passwordRedacted, urlSecrets, withoutPassword } from "../../src/secret-url.ts";
import { createRunDb } from "../../src/store/db.ts";
import { hone } from "../helpers/cli.ts";
import { startFakeVllm } from "../helpers/fake-vllm.ts";
import { offlineOptimizeSettings, tempDir } from "../helpers/fixtures.ts";
import { errorReply, startWireFake } from "./wire-fake.ts";

/**
 * An endpoint's credentials may sit in its URL: a password, a bare token as the userinfo (`https://<token>@host`),
 * or a query parameter (`?key=…` as Google's APIs take it, `?api_key=`, Azure API Management's `subscription-key`).
 * The URL is sent as given; hone writes none of them: not in the model's id (trajectories, records), result.json,
 * hone.db, nor in a message repeating what a server said about the URL.
 */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe("withoutPassword", () => {
  it.each([
    ["http://user:pw-secret@h:1/v1", "http://user:***@h:1/v1"],
    ["http://tok-secret@h:1/v1", "http://***@h:1/v1"],
    ["https://h/v1?key=k-secret", "https://h/v1?key=***"],
    ["https://h/v1?api-version=2024-06-01&api_key=k-secret#x", "https://h/v1?api-version=2024-06-01&api_key=***#x"],
    ["https://h/v1?subscription-key=k-secret&access_token=t-secret", "https://h/v1?subscription-key=***&access_token=***"],
    ["https://h/v1?api-version=2024-06-01", "https://h/v1?api-version=2024-06-01"],
    ["tasks/circle-packing?key=x", "tasks/circle-packing?key=x"],
    ["redis://:pw@127.0.0.1:6379", "redis://:***@127.0.0.1:6379"],
  ])("%s → %s", (url, shown) => {
    expect(withoutPassword(url)).toBe(shown);
    expect(passwordRedacted(shown)).toBe(shown !== url);
  });

  it("urlSecrets names each credential as written and decoded", () => {
    expect(urlSecrets("https://h/v1?key=a%2Fb-secret&api-version=1")).toEqual(["a%2Fb-secret", "a/b-secret"]);
    expect(urlSecrets("http://tok-secret@h/v1")).toEqual(["tok-secret"]);
    expect(urlSecrets("http://u:pw-secret@h/v1")).toEqual(["pw-secret"]);
  });
});

describe("an endpoint URL's token or query key", () => {
  it("is not in the model's id, which every record and trajectory names", () => {
    const byToken = new OpenAICompatibleModel({ baseUrl: "http://tok-secret@127.0.0.1:9/v1", model: "m" }, {});
    expect(byToken.id).toBe("http://***@127.0.0.1:9/v1#m");
    const byQuery = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1?key=q-secret", model: "m" }, {});
    expect(byQuery.id).toBe("http://127.0.0.1:9/v1?key=***#m");
  });

  it("is sent, and not in the message when a server repeats the URL it was asked", async () => {
    const f = await startWireFake([errorReply(400, "bad request for /v1/chat/completions?key=q-secret (token tok-secret)")], {
      flavor: "openai",
    });
    closers.push(f.close);
    const base = f.url.replace("http://", "http://tok-secret@");
    const model = new OpenAICompatibleModel({ baseUrl: `${base}?key=q-secret`, model: "gpt-4.1-mini", dialect: "openai" }, {});
    const err = await model.complete({ messages: [{ role: "user", content: "hi" }] }).catch((e: Error) => e);
    expect(f.requests).toHaveLength(1);
    expect(String(err)).toMatch(/rejected the request \(HTTP 400\)/);
    expect(String(err)).toContain("/chat/completions?key=***");
    expect(String(err)).not.toMatch(/q-secret|tok-secret/);
  });
});

/** Every file under a folder, as text (hone.db included: SQLite keeps text as UTF-8). */
function allText(dir: string): string {
  let out = "";
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    out += statSync(p).isDirectory() ? allText(p) : readFileSync(p).toString("latin1");
  }
  return out;
}

describe("hone run with credentials in the endpoint's URL", () => {
  it("writes none of them in its folder (result.json, hone.db, trajectory) or its output", { timeout: 180_000 }, async () => {
    const f = await startFakeVllm("Qwen/Qwen3-8B");
    closers.push(f.close);
    const host = new URL(f.url).host;
    for (const base of [`http://user:pw-secret@${host}/v1`, `http://tok-secret@${host}/v1`, `http://${host}/v1?key=q-secret`]) {
      const out = join(tempDir(), "run");
      const r = await hone(
        ["run", "--task", "circle-packing", "--base-url", base, "--model", "Qwen/Qwen3-8B", "--max-evals", "3", "--out", out],
        { env: { OPENAI_API_KEY: "sk-key-secret" } },
      );
      expect(r.code, r.stderr).toBe(0);
      const written = allText(out) + r.stdout + r.stderr;
      expect(written).toContain("Qwen/Qwen3-8B");
      const leaks = [...written.matchAll(/.{0,80}(?:pw-secret|tok-secret|q-secret|sk-key-secret).{0,20}/g)].map((m) => m[0]);
      expect(leaks, base).toEqual([]);
    }
    expect(f.requests.length).toBeGreaterThan(3);
  });
});

describe("resuming an optimize run whose endpoint had its key in the URL", () => {
  it("is refused with what to do (the key was never stored, so the resumed run could not call the endpoint)", () => {
    const dir = tempDir();
    const proposer = { model: "m", baseUrl: "https://api.example.org/v1?key=q-secret" };
    createRunDb(join(dir, "hone.db"), "optimize", offlineOptimizeSettings({ proposer }));
    expect(readFileSync(join(dir, "hone.db")).toString("latin1")).not.toContain("q-secret");
    expect(() => storedSettings(dir, {})).toThrow(
      /was started with the proposer at https:\/\/api\.example\.org\/v1\?key=\*\*\*, whose key in the URL hone never stores.*--proposer-api-key-env/,
    );
  });

  it("a password in the URL's userinfo does not stop it (hone sends the key as a bearer token, not the userinfo)", () => {
    const dir = tempDir();
    const executor = { model: "m", baseUrl: "https://u:pw-secret@api.example.org/v1" };
    createRunDb(join(dir, "hone.db"), "optimize", offlineOptimizeSettings({ executor }));
    expect(storedSettings(dir, {}).executor.baseUrl).toBe("https://u:***@api.example.org/v1");
  });
});
