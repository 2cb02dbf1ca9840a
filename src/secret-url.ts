// A URL's password as hone writes it anywhere (hone.db, the terminal, a worker's log): never the password itself.

/** What stands for a URL's password wherever hone writes the URL (`redis://:***@host`). */
export const REDACTED = "***";

const URL_PASSWORD = /^([a-z][a-z0-9+.-]{0,20}:\/\/[^/@:\s]*:)[^/@\s]+@/i;

/** `text` with the password of a URL at its start replaced by REDACTED; anything else unchanged. */
export const withoutPassword = (text: string): string => text.replace(URL_PASSWORD, `$1${REDACTED}@`);

/** The password a URL carries, decoded, to be kept out of messages that may repeat it; undefined when none. */
export function urlPassword(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/** Whether a stored URL had its password taken out (a resumed run needs it given again). */
export const passwordRedacted = (url: string | undefined) => url?.includes(`:${REDACTED}@`) === true;
