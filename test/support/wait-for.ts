/**
 * Poll `check` every 10 ms until it holds, or fail after `timeoutMs` with
 * what was awaited: waiting for a state, never asserting how fast it came.
 */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
