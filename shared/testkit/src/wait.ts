/** Polls `check` until it returns a truthy value; no test asserts on elapsed time, only on outcomes. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'condition'}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
  }
}
