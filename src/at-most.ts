/**
 * Runs `work` on each item with at most `limit` at once. The first failure stops new starts; it is thrown once the
 * work under way has settled, so nothing is left running behind the error.
 */
export async function eachAtMost<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const lane = async () => {
    while (next < items.length && failure === undefined) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failure !== undefined) throw failure;
}
