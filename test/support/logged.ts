import { vi } from 'vitest'

/** The JSON lines edgeserve's log wrote to the console while `run` ran (not printed), and what `run` returned. */
export async function logged<T>(run: () => Promise<T>): Promise<{ result: T; lines: Record<string, unknown>[] }> {
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined)
  try {
    const result = await run()
    return { result, lines: log.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>) }
  } finally {
    log.mockRestore()
  }
}
