import { rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { zygoteAnswers } from "../../src/task/zygote-ping.ts";
import { tempDir } from "../helpers/fixtures.ts";

// The pool's check of its program zygote, against sockets that answer as a zygote would, wrongly, or not at all.
let server: Server | undefined;
afterEach(() => server?.close());

/** A Unix socket whose connections `onRequest` answers once a request line has come. */
function serve(onRequest: (line: string, s: Socket) => void): Promise<string> {
  const path = join(tempDir(), "zygote.sock");
  rmSync(path, { force: true });
  server = createServer((s) => {
    let got = "";
    s.on("data", (d) => {
      got += d;
      if (got.endsWith("\n")) onRequest(got, s);
    });
    s.on("error", () => {});
  });
  return new Promise((resolve) => (server as Server).listen(path, () => resolve(path)));
}

describe("zygoteAnswers", () => {
  it("is true for the call's exact reply to a program call", async () => {
    let request: Record<string, unknown> = {};
    const path = await serve((line, s) => {
      request = JSON.parse(line);
      s.end('24\n{"ok": true, "value": 1}');
    });
    expect(await zygoteAnswers(path)).toBe(true);
    expect(request).toMatchObject({ entry: "ping", args: [], many: false, ext: ".py" });
  });

  it("is false for another reply, a silent zygote, a closed connection and no socket", async () => {
    const wrong = await serve((_l, s) => s.end('24\n{"ok": true, "value": 2}'));
    expect(await zygoteAnswers(wrong)).toBe(false);
    server?.close();
    const silent = await serve(() => {});
    expect(await zygoteAnswers(silent, 300)).toBe(false);
    server?.close();
    const closing = await serve((_l, s) => s.end());
    expect(await zygoteAnswers(closing)).toBe(false);
    server?.close();
    expect(await zygoteAnswers(join(tempDir(), "none.sock"))).toBe(false);
  });
});
