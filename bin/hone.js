#!/usr/bin/env node
// The hone CLI: the bundle that `npm ci` builds into dist/ (plain JavaScript, fast to start) while it matches the
// sources, else straight from the TypeScript sources through tsx, so a checkout being edited needs no build step.
import { freshBundle } from "./bundle.js";

const bundled = freshBundle("hone");
if (bundled) await import(bundled);
else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
