// A URL's credentials as hone writes it anywhere (hone.db, the terminal, a worker's log, result.json): never the
// credentials themselves.

/** What stands for a URL's password, token or key wherever hone writes the URL (`redis://:***@host`). */
export const REDACTED = "***";

const URL_PASSWORD = /^([a-z][a-z0-9+.-]{0,20}:\/\/[^/@:\s]*:)[^/@\s]+@/i;
/** A userinfo without a password (`https://<token>@host`): the token is the credential. */
const URL_USER_ONLY = /^([a-z][a-z0-9+.-]{0,20}:\/\/)[^/@:\s?#]+@/i;
const URL_START = /^[a-z][a-z0-9+.-]{0,20}:\/\//i;

/**
 * Query parameters that carry a credential: `key` (Google's APIs), `api_key`/`api-key`/`apikey`, `subscription-key`
 * (Azure API Management), `access_token`, `token`, `code` (Azure Functions), a signed URL's `sig`/`signature`,
 * `secret`, `password`, `auth`.
 */
const SECRET_PARAM =
  /(?:^|[-_.])(?:[a-z]*key|[a-z]*token|secret|password|passwd|pwd|sig|signature|auth|authorization|code|credentials?)$/i;

const paramName = (pair: string): string => {
  const name = pair.split("=")[0] ?? "";
  try {
    return decodeURIComponent(name.replace(/\+/g, " "));
  } catch {
    return name;
  }
};

/** Whether a query's `name=value` pair carries a credential (its value is secret). */
const isSecretPair = (pair: string) => pair.includes("=") && SECRET_PARAM.test(paramName(pair));

/** The query's parameters as written (`name=value` pairs and where they are), for those whose values are secret. */
function secretPairs(url: string): { pair: string; value: string }[] {
  const at = url.indexOf("?");
  if (at === -1) return [];
  const query = url.slice(at + 1).replace(/#.*$/, "");
  return query
    .split("&")
    .filter(isSecretPair)
    .map((pair) => ({ pair, value: pair.slice(pair.indexOf("=") + 1) }))
    .filter((p) => p.value !== "" && p.value !== REDACTED);
}

/**
 * `text` with the credentials of a URL at its start replaced by REDACTED: the password of its userinfo (a userinfo
 * without one is a token: all of it) and the values of its query's credential parameters (`?key=…`); anything else
 * unchanged.
 */
export function withoutPassword(text: string): string {
  if (!URL_START.test(text)) return text;
  const noUser = URL_PASSWORD.test(text)
    ? text.replace(URL_PASSWORD, `$1${REDACTED}@`)
    : text.replace(URL_USER_ONLY, `$1${REDACTED}@`);
  const at = noUser.indexOf("?");
  if (at === -1) return noUser;
  const [query = "", ...fragment] = noUser.slice(at + 1).split("#");
  const shown = query
    .split("&")
    .map((pair) => (isSecretPair(pair) ? `${pair.split("=")[0]}=${REDACTED}` : pair))
    .join("&");
  return `${noUser.slice(0, at + 1)}${[shown, ...fragment].join("#")}`;
}

/** The password a URL carries, decoded, to be kept out of messages that may repeat it; undefined when none. */
export function urlPassword(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every credential a URL carries (its password, a userinfo token, credential query values), as written and decoded,
 * to be kept out of messages that may repeat it (a server echoing the request's URL).
 */
export function urlSecrets(url: string): string[] {
  const out = new Set<string>();
  const add = (raw: string) => {
    if (!raw) return;
    out.add(raw);
    try {
      out.add(decodeURIComponent(raw.replace(/\+/g, " ")));
    } catch {
      // Not percent-encoded text: as written only.
    }
  };
  try {
    const u = new URL(url);
    add(u.password);
    if (!u.password) add(u.username);
  } catch {
    return [];
  }
  for (const { value } of secretPairs(url)) add(value);
  return [...out];
}

/** Whether a stored URL had a credential of its query taken out (`?key=***`). */
export const queryKeyRedacted = (url: string | undefined) =>
  url !== undefined && URL_START.test(url) && /[?&][^=&#]*=\*\*\*(?:[&#]|$)/.test(url);

/** Whether a stored URL had a credential taken out (a resumed run needs it given again). */
export const passwordRedacted = (url: string | undefined) =>
  url !== undefined && (/^[a-z][a-z0-9+.-]{0,20}:\/\/[^/@\s]*\*\*\*@/i.test(url) || queryKeyRedacted(url));

/**
 * Why a run started with `url` (as stored: its query's key taken out) cannot be resumed, or undefined when it can:
 * the key was never stored, so a resumed run would call the endpoint without it.
 */
export function keyedUrlResumeProblem(runDir: string, role: string, url: string | undefined, keyEnv: string): string | undefined {
  if (!queryKeyRedacted(url)) return undefined;
  return `${runDir} was started with the ${role} at ${url}, whose key in the URL hone never stores, so a resumed run cannot call it: start a new run, with the key in an environment variable (${keyEnv}) rather than in the URL`;
}
