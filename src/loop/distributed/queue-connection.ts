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

/** A command-line argument with the credentials of a URL in it hidden: the argument itself, or an `--option=` value. */
function argumentShown(arg: string): string {
  const option = /^(--?[^=\s]+=)(.*)$/s.exec(arg);
  return option ? `${option[1]}${withoutPassword(option[2] as string)}` : withoutPassword(arg);
}

/**
 * Takes the password of a queue URL given on the command line (`--queue redis://:pw@host`) out of the process's
 * title, which any user of the machine reads (`ps`, /proc/<pid>/cmdline) for as long as a worker or a coordinator
 * runs; `process.argv` keeps it. Nothing changes when no argument carries a credential.
 */
export function hideCredentialsFromTitle(argv: readonly string[] = process.argv): void {
  const shown = argv.map(argumentShown);
  if (shown.every((arg, i) => arg === argv[i])) return;
  process.title = [process.argv0, ...process.execArgv, ...shown.slice(1)].join(" ");
}

export function connectionFrom(url: string): QueueConnection {
  hideCredentialsFromTitle();
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

/** What one PING at a queue's Redis met: the first error on the way (or the ping's own), or its answer, or no answer in time. */
type Ping = { error: Error } | { pong: unknown } | { late: true };

/** PINGs the Redis at `connection` once, connected as the queue connects (TLS, ACL user, database), never retried. */
async function pingOnce(connection: QueueConnection, timeoutMs: number): Promise<Ping> {
  const client = new Redis({ ...connection, lazyConnect: true, connectTimeout: timeoutMs, retryStrategy: () => null });
  const errors: Error[] = [];
  client.on("error", (err: Error) => errors.push(err));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Ping>((resolve) => {
    timer = setTimeout(() => resolve({ late: true }), timeoutMs);
  });
  const ping = async (): Promise<Ping> => {
    await client.connect();
    const pong = await client.ping();
    // A refusal on the way that the connection survived: a database number out of range, a wrong password.
    return errors[0] ? { error: errors[0] } : { pong };
  };
  try {
    return await Promise.race([ping(), late]);
  } catch (err) {
    // The first error the connection met says more than the closed connection's.
    return { error: errors[0] ?? (err as Error) };
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
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
  const r = await pingOnce(connection, timeoutMs);
  if ("late" in r) return `no answer within ${timeoutMs / 1000} s`;
  if ("error" in r) return connectionFault(r.error);
  return r.pong === "PONG" ? undefined : `it answered ${String(r.pong).slice(0, 80)}`;
}

/** Redis's replies to a connection it will never take: a wrong or missing password, an ACL user it refuses. */
const PASSWORD_REFUSED = /^(WRONGPASS|NOAUTH)|invalid password|invalid username-password/i;

/**
 * Throws when the Redis at `url` answers but refuses the queue's connection (a wrong password or ACL user, a
 * database number out of range: Redis's own reply, which no retry changes), as a coordinator or worker starts. Its
 * connections would otherwise retry for ever, or, a refused database, go on in database 0, among other runs' jobs.
 * A Redis not reachable now is no refusal: the queue's connections wait for it.
 */
export async function refuseRefusingQueue(url: string, timeoutMs = 5000): Promise<void> {
  const r = await pingOnce(connectionFrom(url), timeoutMs);
  // A reply of Redis's has no code; a connection's failure (ECONNREFUSED, a TLS error) has one. Only a refusal no
  // retry changes stops the start: a busy server (max clients, BUSY, MASTERDOWN, LOADING) is waited for, and a
  // NOPERM on PING alone says nothing of what BullMQ's commands may do.
  if (!("error" in r) || (r.error as NodeJS.ErrnoException).code) return;
  const message = r.error.message.slice(0, 200);
  const fix = PASSWORD_REFUSED.test(message)
    ? "give the user and password it takes in the URL (redis://user:password@host:port)"
    : /DB index/i.test(message)
      ? "give a database number the server has (0-15 by default) after the port"
      : /^NOPERM.*\bselect\b/i.test(message)
        ? "give a database number this user may use after the port, or a user that may SELECT it"
        : undefined;
  if (!fix) return;
  throw new HoneError("endpoint", `the queue at ${withoutPassword(url)} refuses hone (${message}): ${fix}`);
}
