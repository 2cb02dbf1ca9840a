import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: bin/bundle.js is plain JavaScript (it runs before any TypeScript can), without declarations.
import { freshBundle } from "../../bin/bundle.js";
import { CIRCLE_PACKING, ROOT, tempDir } from "../helpers/fixtures.ts";

interface Metafile {
  outputs: Record<
    string,
    { inputs: Record<string, { bytesInOutput: number }>; imports: { path: string; kind: string; external?: boolean }[] }
  >;
}

/** What loading `entry` loads before any command runs: every output reached by static imports, and the packages. */
function startupClosure(meta: Metafile, entry: string): { inputs: string[]; externals: string[] } {
  const seen = new Set<string>();
  const externals = new Set<string>();
  const walk = (out: string) => {
    if (seen.has(out)) return;
    seen.add(out);
    for (const i of meta.outputs[out]?.imports ?? []) {
      if (i.kind !== "import-statement") continue;
      if (i.external) externals.add(i.path);
      else walk(i.path);
    }
  };
  walk(entry);
  return { inputs: [...seen].flatMap((o) => Object.keys(meta.outputs[o]?.inputs ?? {})), externals: [...externals] };
}

const HEAVY = ["better-sqlite3", "isolated-vm", "bullmq", "ioredis", "playwright-core"];
const BUNDLED_HEAVY = ["zod", "yaml", "isomorphic-git", "acorn", "ajv", "hyparquet", "openai", "hono", "@hono/node-server"];

describe("the CLI bundle (scripts/build-cli.mjs)", () => {
  const out = join(tempDir("hone-bundle-"), "dist");
  let meta: Metafile;
  let entry: string;
  beforeAll(() => {
    execFileSync(process.execPath, [join(ROOT, "scripts", "build-cli.mjs"), out], { stdio: "pipe" });
    meta = JSON.parse(readFileSync(join(out, "metafile.json"), "utf8")) as Metafile;
    entry = Object.keys(meta.outputs).find((o) => o.endsWith("/hone.js")) as string;
  }, 60_000);

  it("loads none of the heavy modules at start: each command's action imports its own", () => {
    const { inputs, externals } = startupClosure(meta, entry);
    expect(externals.filter((e) => HEAVY.some((h) => e === h || e.startsWith(`${h}/`)))).toEqual([]);
    expect(inputs.filter((i) => BUNDLED_HEAVY.some((h) => i.includes(`node_modules/${h}/`)))).toEqual([]);
    expect(inputs.some((i) => i.startsWith("src/store/") || i.startsWith("src/console/"))).toBe(false);
    // They are still in the bundle, in chunks that a command's action loads (the native modules through require).
    const imported = Object.values(meta.outputs).flatMap((o) => o.imports.map((i) => i.path));
    expect(imported).toContain("bullmq");
    const bundled = Object.values(meta.outputs).flatMap((o) => Object.keys(o.inputs));
    expect(bundled.some((i) => i.startsWith("src/console/server.ts"))).toBe(true);
  });

  it("carries zod's English messages only, and they read as zod's own", () => {
    const bundled = Object.values(meta.outputs).flatMap((o) => Object.keys(o.inputs));
    const locales = bundled.filter((i) => /node_modules\/zod\/v4\/locales\/(?!index\.js$)/.test(i));
    expect(locales).toEqual(["node_modules/zod/v4/locales/en.js"]);
    const config = join(tempDir("hone-bundle-zod-"), "optimize.yaml");
    writeFileSync(config, "task: circle-packing\nexecutor: 5\n");
    let stderr = "";
    try {
      execFileSync(process.execPath, [join(out, "hone.js"), "optimize", "--config", config], { stdio: "pipe" });
    } catch (err) {
      stderr = String((err as { stderr?: Buffer }).stderr);
    }
    expect(stderr).toContain("(executor): Invalid input: expected object, received number");
  });

  it("carries only the parts of zod hone uses, never its whole namespace object", () => {
    // `import { z } from "zod"` or `import("zod")` anywhere makes the namespace a value: every schema kind, zod's
    // JSON Schema reader and its schema compiler (z.compile) then come along (~390 KB against ~200 KB).
    const bytes = new Map<string, number>();
    for (const o of Object.values(meta.outputs))
      for (const [input, { bytesInOutput }] of Object.entries(o.inputs))
        if (input.includes("node_modules/zod/")) bytes.set(input, (bytes.get(input) ?? 0) + bytesInOutput);
    for (const unused of ["v4/classic/external.js", "v4/classic/from-json-schema.js", "v4/core/compile.js"])
      expect(bytes.get(`node_modules/zod/${unused}`) ?? 0, unused).toBe(0);
    expect([...bytes.values()].reduce((a, b) => a + b, 0)).toBeLessThan(260_000);
  });

  it("runs from anywhere and finds the runtime files beside the sources (tasks, python helpers)", () => {
    const help = execFileSync(process.execPath, [join(out, "hone.js"), "--help"], { encoding: "utf8" });
    expect(help).toContain("Usage: hone");
    const shown = execFileSync(process.execPath, [join(out, "hone.js"), "tasks", "show", "circle-packing", "--json"], {
      encoding: "utf8",
    });
    expect(JSON.parse(shown).dir).toBe(CIRCLE_PACKING);
    const evaluated = execFileSync(
      process.execPath,
      [join(out, "hone.js"), "evaluate", "--task", "circle-packing", join(CIRCLE_PACKING, "initial_program.py"), "--json"],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(JSON.parse(evaluated).valid).toBe(true);
  }, 90_000);
});

describe("freshBundle (bin/bundle.js)", () => {
  function checkout(): { root: string; source: string } {
    const root = tempDir("hone-fresh-");
    mkdirSync(join(root, "src"));
    mkdirSync(join(root, "dist"));
    const source = join(root, "src", "a.ts");
    writeFileSync(source, "export const a = 1;\n");
    utimesSync(source, 1_700_000_000, 1_700_000_000);
    writeFileSync(join(root, "dist", "manifest.json"), JSON.stringify({ inputs: { "src/a.ts": [20, 1_700_000_000_000] } }));
    return { root, source };
  }
  const url = (root: string) => `${pathToFileURL(root).href}/`;

  it("gives the bundle while every source has the size and time it was built from", () => {
    const { root } = checkout();
    expect(freshBundle("hone", url(root))).toBe(`${url(root)}dist/hone.js`);
  });

  it("falls back to the sources when one changed, vanished, or there is no manifest", () => {
    const edited = checkout();
    writeFileSync(edited.source, "export const a = 2;\n");
    expect(freshBundle("hone", url(edited.root))).toBeUndefined();
    const touched = checkout();
    utimesSync(touched.source, 1_700_000_001, 1_700_000_001);
    expect(freshBundle("hone", url(touched.root))).toBeUndefined();
    const none = tempDir("hone-fresh-");
    expect(freshBundle("hone", url(none))).toBeUndefined();
  });
});
