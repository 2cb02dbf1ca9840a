import { isIP } from "node:net";
import { Redis } from "ioredis";
import { HoneError } from "../../errors.ts";
import { withoutPassword } from "../../secret-url.ts";

// What a --queue URL connects to (redis://, rediss:// for TLS, an ACL user, a database), what to do about an error
// the connection meets, and what `hone doctor --queue` says of one. Loads no BullMQ.

/** The ioredis options a queue URL stands for (redis://, or rediss:// for TLS). */
export interface QueueConnection {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
  /**
   * With rediss://: TLS, the server's certificate checked against the host named in the URL by Node's trusted CAs
   * (NODE_EXTRA_CA_CERTS adds a private CA's PEM file, as for any Node program); a host name is also sent as SNI,
   * which hosted Redis services route by.
   */
  tls?: { servername?: string };
  maxRetriesPerRequest: null;
}

export function connectionFrom(url: string): QueueConnection {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new HoneError("usage", `--queue takes a Redis URL like redis://127.0.0.1:6379, not "${withoutPassword(url)}"`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:")
    throw new HoneError("usage", `--queue takes a redis:// URL (rediss:// for TLS), not ${u.protocol}`);
  const db = u.pathname.length > 1 ? u.pathname.slice(1) : undefined;
  if (db !== undefined && !/^\d{1,5}$/.test(db))
    throw new HoneError("usage", `--queue ${withoutPassword(url)}: the part after the port is a database number, not "${db}"`);
  // A URL writes an IPv6 address in brackets ([::1]); a socket connects to the address without them.
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1";
  return {
    host,
    port: Number(u.port || 6379),
    // A Redis 6 ACL user (redis://user:password@host): without the name Redis takes the password for `default`'s.
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: db === undefined ? undefined : Number(db),
    ...(u.protocol === "rediss:" ? { tls: isIP(host) ? {} : { servername: host } } : {}),
    maxRetriesPerRequest: null,
  };
}

/** Whether a connection's error is about the server's TLS certificate (a code of OpenSSL's or of Node's TLS). */
const certificateError = (code: string) => /CERT|SELF_SIGNED|ISSUER|ERR_TLS|ERR_SSL/.test(code);

/** A hint for an error a queue connection meets, where one helps: a TLS certificate this machine does not trust. */
export function connectionHint(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code ?? "";
  return certificateError(code) && !code.includes("ALTNAME")
    ? "; if the server's certificate comes from a private CA, give its PEM file in NODE_EXTRA_CA_CERTS"
    : "";
}

/** What a queue connection's failure was, in a line: its code (ECONNREFUSED, a TLS error) or Redis's reply. */
function connectionFault(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (!code) return `it refused: ${err.message.slice(0, 200)}`;
  return `cannot connect (${code}${certificateError(code) ? `: ${err.message.slice(0, 200)}` : ""})${connectionHint(err)}`;
}

/**
 * Why the Redis at `url` does not answer PING within `timeoutMs` (`hone doctor --queue`), or undefined when it
 * answers: connected as the queue connects (TLS, ACL user, database), never retried.
 */
export async function queueFault(url: string, timeoutMs = 3000): Promise<string | undefined> {
  let connection: QueueConnection;
  try {
    connection = connectionFrom(url);
  } catch (err) {
    return (err as Error).message;
  }
  const client = new Redis({ ...connection, lazyConnect: true, connectTimeout: timeoutMs, retryStrategy: () => null });
  const errors: Error[] = [];
  client.on("error", (err: Error) => errors.push(err));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
  });
  const ping = async () => {
    await client.connect();
    const pong = await client.ping();
    // A refusal on the way that the connection survived: a database number out of range, a wrong password.
    if (errors[0]) return connectionFault(errors[0]);
    return pong === "PONG" ? undefined : `it answered ${String(pong).slice(0, 80)}`;
  };
  try {
    return await Promise.race([ping(), late]);
  } catch (err) {
    // The first error the connection met says more than the closed connection's.
    return connectionFault(errors[0] ?? (err as Error));
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
