/** The "model loaded" lines among what console.log was called with (the server's JSON log lines). */
export function modelsLoaded(calls: readonly unknown[][]): { runtime: string; provider: string }[] {
  return calls.flatMap(([line]) => {
    if (typeof line !== 'string' || !line.startsWith('{')) return []
    const parsed = JSON.parse(line) as { event?: string; runtime: string; provider: string }
    return parsed.event === 'model loaded' ? [parsed] : []
  })
}
