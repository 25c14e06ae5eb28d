/** Asks `ask` again, at growing intervals (10 ms, doubling to 200 ms), until it answers or `until` passes (null). */
export async function askUntil<T>(until: number, ask: () => Promise<T | null>): Promise<T | null> {
  for (let wait = 10; Date.now() < until; wait = Math.min(wait * 2, 200)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    const answer = await ask();
    if (answer) return answer;
  }
  return null;
}
