/**
 * Test-only middleware of the test Worker: the requests of a burst
 * (`x-test-burst: <name>/<size>`) wait here until all `size` of them have
 * reached the isolate, and then go on together, in one turn of its event
 * loop.
 *
 * Why: a test that asserts concurrent requests share an object call must
 * first make them concurrent in the isolate. Sent at once from the test
 * process, on a loaded two-core machine they can still reach the isolate
 * several event-loop turns apart, and a call then goes with the first ones,
 * as it must (a call waits for no one who has not come). Held here, they
 * arrive as one moment's requests do in production, and what the test then
 * sees of the calls is the product's doing alone.
 *
 * A burst not whole within BURST_WAIT_MS goes on as it is, so a request lost
 * on the way fails the test on its counts, not at the test's timeout.
 */
import type { MiddlewareHandler } from 'hono'
import { withResolvers, type Resolvers } from '../../src/batching/resolvers.js'

/** How long the first requests of a burst wait for the rest. */
const BURST_WAIT_MS = 5_000

/** Each burst not yet whole: how many of it arrived, and what lets them go. */
const bursts = new Map<string, { arrived: number; whole: Resolvers<void> }>()

/** The header that makes `size` requests one burst named `name`: a test spreads it into each request's headers. */
export const burstHeader = (name: string, size: number) => ({ 'x-test-burst': `${name}/${size}` })

export const burstBarrier: MiddlewareHandler = async (c, next) => {
  const header = c.req.header('x-test-burst')
  if (header !== undefined) await arrive(header)
  await next()
}

async function arrive(header: string): Promise<void> {
  const slash = header.lastIndexOf('/')
  const name = header.slice(0, slash)
  const size = Number(header.slice(slash + 1))
  let burst = bursts.get(name)
  if (!burst) bursts.set(name, (burst = { arrived: 0, whole: withResolvers<void>() }))
  burst.arrived++
  if (burst.arrived >= size) {
    bursts.delete(name)
    burst.whole.resolve()
    return
  }
  // A pending timer of its own: workerd cancels as hung a request that waits only on another request's doing.
  let alive: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<void>((resolve) => (alive = setTimeout(resolve, BURST_WAIT_MS)))
  await Promise.race([burst.whole.promise, late])
  clearTimeout(alive)
}
