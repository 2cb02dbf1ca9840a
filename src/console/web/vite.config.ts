import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: "/",
  plugins: [react()],
  logLevel: "warn",
  build: { outDir: join(here, "..", "dist"), emptyOutDir: true, chunkSizeWarningLimit: 1000 },
});
