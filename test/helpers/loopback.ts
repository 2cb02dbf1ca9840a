import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Starts a fake endpoint's server on a free loopback port: its base URL (`…/v1`) and a close that drops open
 * keep-alive connections first, so a test's end never waits on a client's idle socket.
 */
export async function listenLoopback(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
