import { existsSync, readFileSync, statSync } from "node:fs";
import type { Command } from "commander";
import { HoneError } from "../../errors.ts";
import { atStop, stopPolicy } from "../shutdown.ts";

function readToken(file: string | undefined): string | undefined {
  if (process.env.HONE_VIEW_TOKEN) return process.env.HONE_VIEW_TOKEN.trim();
  if (!file) return undefined;
  if (!existsSync(file)) throw new HoneError("usage", `--token-file ${file} does not exist; write a long random secret into it`);
  const mode = statSync(file).mode & 0o077;
  if (mode !== 0) process.stderr.write(`warning: ${file} is readable by other users; chmod 600 it\n`);
  return readFileSync(file, "utf8").trim();
}

export function registerView(program: Command): void {
  program
    .command("view [runs-dir]")
    .description("a web console on a folder of run directories: curves, lineage, diffs, trajectories, live updates")
    .option("--host <host>", "address to bind; anything but loopback needs --token-file", "127.0.0.1")
    .option("--port <n>", "port (0 picks a free one)", "4460")
    .option("--token-file <file>", "file holding the access token (or set HONE_VIEW_TOKEN)")
    .option("--json", "print the address as JSON once listening")
    .action(async (dir: string | undefined, opts) => {
      const root = dir ?? "runs";
      if (!existsSync(root) || !statSync(root).isDirectory())
        throw new HoneError("usage", `${root} is not a folder; pass a folder of run directories (hone optimize --out <dir>)`);
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new HoneError("usage", `--port ${opts.port} is not a port number`);
      const { ensureConsoleBuilt } = await import("../../console/build.ts");
      const { startConsole } = await import("../../console/server.ts");
      await ensureConsoleBuilt();
      const token = readToken(opts.tokenFile);
      const server = await startConsole({ root, host: opts.host, port, token });
      // One line, so a script can read the address as soon as it appears.
      if (opts.json) process.stdout.write(`${JSON.stringify({ url: server.url, root })}\n`);
      else
        process.stdout.write(
          `hone view: ${server.url}${token ? "/?token=<your token>" : ""}  (runs under ${root}; Ctrl-C to stop)\n`,
        );
      // Serves until asked to stop: open event streams are closed with the server, within 5 s, and it exits 0.
      stopPolicy({ graceMs: 5000, exitCode: 0 });
      atStop(() => server.close());
    });
}
