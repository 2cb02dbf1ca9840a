// Builds the hone CLI into dist/ with esbuild, so a user's start runs plain JavaScript instead of transforming the
// TypeScript sources through tsx (`npm ci` runs it through "prepare"; bin/hone.js uses dist/ only while it is fresh).
//
// - Code splitting: a command's heavy modules (the queue, the sandbox isolate, the console server, the database)
//   sit in chunks that load only when that command's action imports them.
// - Native modules, and packages that read their own files at run time, stay in node_modules.
// - zod's locales other than English are left out (zodEnglishOnly below), and hone imports zod as `import * as z`,
//   which esbuild shakes down to the parts hone uses (~200 KB of ~390): `import { z }` or `import("zod")` makes the
//   namespace a value and brings all of it back, so biome.json refuses the first and the bundle test checks the size.
// - Every `import.meta.url` in src/ is rewritten to the URL of the source file it was written in, computed from
//   the bundle's own location, so paths to runtime assets (src/task/python, tasks/, harnesses/) stay the same.
// - dist/manifest.json lists every source file bundled with its size and modification time (bin/bundle.js);
//   dist/metafile.json is esbuild's account of every output's inputs and imports.
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
// `node scripts/build-cli.mjs [out-dir]`: dist/ unless another folder is given (the tests build into a temporary one).
const OUT = resolve(process.argv[2] ?? join(ROOT, "dist"));
const EXTERNAL = ["better-sqlite3", "isolated-vm", "bullmq", "ioredis", "playwright-core", "tsx", "esbuild", "vite"];

const sourceUrls = {
  name: "source-urls",
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("import.meta.url")) return undefined;
      const fromBundle = relative(OUT, args.path).split("\\").join("/");
      const url = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
      return { contents: text.replaceAll("import.meta.url", url), loader: "ts" };
    });
  },
};

// zod's classic API re-exports all of its ~40 locales (`z.locales`), ~0.36 MB that every command loading zod parsed;
// hone uses zod's default English messages only, so the bundle's `z.locales` holds `en` alone.
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: "js",
      resolveDir: dirname(args.path),
    }));
  },
};

rmSync(OUT, { recursive: true, force: true });
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { hone: "src/cli/main.ts", "offline-worker": "src/model/offline/worker-serve.ts" },
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: EXTERNAL,
  // Bundled CommonJS packages call require() for Node's own modules.
  banner: { js: 'import { createRequire as __honeRequire } from "node:module"; const require = __honeRequire(import.meta.url);' },
  plugins: [sourceUrls, zodEnglishOnly],
  metafile: true,
  logLevel: "warning",
});
const inputs = {};
for (const file of Object.keys(result.metafile.inputs)) {
  if (!file.startsWith("src/")) continue;
  const s = statSync(join(ROOT, file));
  inputs[file] = [s.size, s.mtimeMs];
}
// What each output file holds and imports (the start-up test walks it).
writeFileSync(join(OUT, "metafile.json"), JSON.stringify(result.metafile));
writeFileSync(join(OUT, "manifest.json"), `${JSON.stringify({ inputs })}\n`);
