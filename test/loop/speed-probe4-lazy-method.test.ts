import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { HoneError } from "../../src/errors.ts";
import { isBuiltinMethod, loadedMethod, loadMethod, METHOD_LOADERS } from "../../src/method/catalog.ts";
import { METHODS, methodByName } from "../../src/method/registry.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

interface Metafile {
  outputs: Record<
    string,
    { entryPoint?: string; inputs: Record<string, unknown>; imports: { path: string; kind: string; external?: boolean }[] }
  >;
}

/** Every source file that loading the bundle's output for `entry` (a command's action import) loads with it. */
function staticInputs(meta: Metafile, entry: string): string[] {
  const start = Object.keys(meta.outputs).find((o) => meta.outputs[o]?.entryPoint === entry);
  if (!start) throw new Error(`no output has the entry point ${entry}`);
  const seen = new Set<string>();
  const walk = (out: string) => {
    if (seen.has(out)) return;
    seen.add(out);
    for (const i of meta.outputs[out]?.imports ?? []) if (i.kind === "import-statement" && !i.external) walk(i.path);
  };
  walk(start);
  return [...seen].flatMap((o) => Object.keys(meta.outputs[o]?.inputs ?? {}));
}

describe("a run imports its own method only (catalog.ts), and not the offline model's server", () => {
  it("lists the same methods as the registry, each loader giving the registry's own object", async () => {
    expect(Object.keys(METHOD_LOADERS).sort()).toEqual(Object.keys(METHODS).sort());
    for (const name of Object.keys(METHODS)) {
      expect(isBuiltinMethod(name)).toBe(true);
      expect(await loadMethod(name)).toBe(METHODS[name]);
      expect(loadedMethod(name)).toBe(METHODS[name]);
    }
  });

  it("refuses an unknown name as the registry does, loaded or not", async () => {
    const registry = (() => {
      try {
        methodByName("no-such-method");
      } catch (err) {
        return err as HoneError;
      }
    })();
    await expect(loadMethod("no-such-method")).rejects.toThrow(registry?.message as string);
    expect(() => loadedMethod("no-such-method")).toThrow(HoneError);
    expect(isBuiltinMethod("toString")).toBe(false);
  });

  it("loads a method folder as the external method, by path", async () => {
    const dir = join(tempDir("hone-speed-method-"), "mine");
    mkdirSync(dir);
    writeFileSync(join(dir, "method.json"), JSON.stringify({ name: "mine", entrypoint: "python3 propose.py" }));
    writeFileSync(join(dir, "propose.py"), "");
    const m = await loadMethod(dir);
    expect(m.name).toBe(methodByName(dir).name);
    expect(m.edits).toBe("folder");
    expect(loadedMethod(dir).summary).toBe(m.summary);
  });

  describe("in the CLI bundle", () => {
    let meta: Metafile;
    beforeAll(() => {
      const out = join(tempDir("hone-speed-bundle-"), "dist");
      execFileSync(process.execPath, [join(ROOT, "scripts", "build-cli.mjs"), out], { stdio: "pipe" });
      meta = JSON.parse(readFileSync(join(out, "metafile.json"), "utf8")) as Metafile;
    }, 120_000);

    for (const entry of ["src/loop/replay.ts", "src/loop/optimize.ts"])
      it(`${entry} loads no method's module and no offline-model policy before a run names one`, () => {
        const inputs = staticInputs(meta, entry);
        expect(inputs).toContain("src/method/catalog.ts");
        expect(inputs.filter((i) => i.startsWith("src/method/methods/"))).toEqual([]);
        expect(inputs.filter((i) => /^src\/model\/offline\/(server|policy|roles)\.ts$/.test(i))).toEqual([]);
        // The QA benchmarks' registry (41 modules) only where a run replays a train or eval run (train-setup.ts).
        if (entry === "src/loop/replay.ts") expect(inputs.filter((i) => i.startsWith("src/task/qa/"))).toEqual([]);
        // Still in the bundle, each method in a chunk of its own that a run imports when it names the method.
        const bundled = Object.values(meta.outputs).flatMap((o) => Object.keys(o.inputs));
        expect(bundled).toContain("src/method/methods/gepa.ts");
        expect(bundled).toContain("src/model/offline/server.ts");
      });
  });
});
