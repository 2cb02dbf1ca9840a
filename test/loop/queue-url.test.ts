import { describe, expect, it } from "vitest";
import { connectionFrom } from "../../src/loop/distributed/queue-connection.ts";

// What a --queue URL connects to, before anything connects (test/e2e/distributed-tls.test.ts connects over TLS).

describe("rediss:// queue URLs", () => {
  it("connect with TLS, naming a host name for SNI (an IP address is not sent as one)", () => {
    expect(connectionFrom("rediss://user:pw@redis.example.org:6380/2")).toMatchObject({
      host: "redis.example.org",
      port: 6380,
      username: "user",
      db: 2,
      tls: { servername: "redis.example.org" },
    });
    expect(connectionFrom("rediss://127.0.0.1:6380").tls).toEqual({});
    expect(connectionFrom("redis://127.0.0.1:6380").tls).toBeUndefined();
    expect(() => connectionFrom("http://127.0.0.1:6380")).toThrow(/redis:\/\/ URL \(rediss:\/\/ for TLS\), not http:/);
  });
});
