/** Polls `probe` until it returns a value that is not undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 25));
  }
  throw new Error(`timed out after ${options.timeoutMs ?? 10_000} ms waiting for ${options.what ?? 'condition'}${last ? `: ${String(last)}` : ''}`);
}
