// Worker-thread entry for the offline model: the bundled worker when dist/ is fresh (bin/bundle.js), else the
// TypeScript source through tsx.
import { freshBundle } from "../../../bin/bundle.js";

const bundled = freshBundle("offline-worker");
if (bundled) await import(bundled);
else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("./worker-serve.ts");
}
