import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone, startHone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

describe("hone view (CLI)", () => {
  it("refuses a folder that does not exist with exit 2", async () => {
    const r = await hone(["view", join(tempDir(), "nope")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not a folder/);
  });

  it("refuses to share runs beyond loopback without a token, with exit 2", async () => {
    const r = await hone(["view", tempDir(), "--host", "0.0.0.0", "--port", "0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--token-file/);
  });

  it("serves on every interface only to requests that carry the token from the token file", async () => {
    const root = tempDir();
    await writeSyntheticRun(join(root, "one"), { rounds: 1, perRound: 2 });
    const tokenFile = join(tempDir(), "token");
    const token = "a-long-random-secret-for-the-test";
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const view = await startHone(["view", root, "--host", "0.0.0.0", "--port", "0", "--token-file", tokenFile, "--json"]);
    try {
      const { url } = JSON.parse(view.firstLine) as { url: string };
      const port = new URL(url).port;
      const api = `http://127.0.0.1:${port}/api/runs`;
      expect((await fetch(api)).status).toBe(401);
      const ok = await fetch(api, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { total: number }).total).toBe(1);
      expect(view.output()).not.toContain(token);
    } finally {
      await view.stop();
    }
  });
});
