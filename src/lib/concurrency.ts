/**
 * Runs `fn` on each of `items`, at most `limit` at once, starting them in their order; settles when every one
 * has. A failure does not stop the others from running: the first one is thrown once all are done.
 */
export async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane));
  if (failure) throw failure.err;
}
