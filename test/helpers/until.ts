/** Polls `probe` every 50 ms until it returns something truthy; throws naming `what` after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
