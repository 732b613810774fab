/**
 * `adaptive` on a real clock: a batched function whose handler busy-waits a
 * set cost for a batch of n, 64 callers in a closed loop, and a cost that
 * changes while they call. The learner times batches with performance.now(),
 * as it does in a server.
 *
 * The handler spins until the wall clock reaches its batch's end, so the
 * time a batch takes is its cost however busy the machine is: another
 * process taking the core (a loaded CI machine) delays what runs between
 * batches, and at worst makes a batch end late, a pause the learner must
 * bear anyway, but it cannot make one curve look like the other. And the
 * two curves are far apart: the best sizes of one serve under 60% of the
 * best of the other.
 */
import { describe, expect, it } from 'vitest'
import { sizeLadder } from '../../../src/batching/adaptive.js'
import { batch } from '../../../src/index.js'
import { mostSeen } from '../../support/most-seen.js'

type Cost = (n: number) => number

function spin(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // busy: the batch's cost
  }
}

/** A fixed overhead and a cheap item: 64 serves the most (8.9 items/ms), and 45 only 81% of it. */
const overhead: Cost = (n) => 4 + 0.05 * n
/**
 * An overhead, and an item cost that grows with the batch (n²): 8 serves the
 * most (1.36 items/ms), 6 and 11 within 4% of it, 4 and 16 only 85%, 64 a
 * third. Its batches near the best take 4 to 8 ms, long enough that the time
 * between batches, which a busy machine stretches, stays small beside them.
 */
const superlinear: Cost = (n) => 2 + 0.25 * n + 0.03 * n * n

/** The sizes the learner chooses from that serve within 10% of the most items/s of `cost`. */
function within10(cost: Cost, max: number): number[] {
  const speed = (n: number) => n / cost(n)
  const sizes = sizeLadder(max)
  const most = Math.max(...sizes.map(speed))
  return sizes.filter((n) => speed(n) >= 0.9 * most)
}

/**
 * 64 closed-loop callers of a batched function costing `before`, switched to
 * `after` once `warmMs` have passed; each batch's (time since
 * the switch, limit in force) until `afterMs` past it.
 */
async function followSwitch(before: Cost, after: Cost, warmMs: number, afterMs: number) {
  let cost = before
  let switchedAt = Infinity
  const seen: { at: number; limit: number }[] = []
  const f = batch(
    async (xs: number[]) => {
      seen.push({ at: performance.now() - switchedAt, limit: f.stats().batchSizeLimit })
      spin(cost(xs.length))
      return xs
    },
    { maxBatchSize: 64, adaptive: true },
  )
  const start = performance.now()
  let stop = false
  const callers = Array.from({ length: 64 }, async () => {
    while (!stop) {
      await f(1)
      const now = performance.now()
      if (switchedAt === Infinity && now - start >= warmMs) {
        cost = after
        switchedAt = now
        seen.length = 0
      }
      if (now - switchedAt >= afterMs) stop = true
    }
  })
  await Promise.all(callers)
  return seen
}

/** When the limit first held one of `sizes` (ms after the switch; Infinity if never). */
function reachedAt(seen: { at: number; limit: number }[], sizes: number[]): number {
  return seen.find(({ limit }) => sizes.includes(limit))?.at ?? Infinity
}

/**
 * What the limits in force from `fromMs` to `toMs` after the switch serve, by
 * `cost`, over what the best size on the ladder serves: the mean over that
 * time of items/s at the limit in force over the most.
 */
function servedOfBest(seen: { at: number; limit: number }[], cost: Cost, fromMs: number, toMs: number): number {
  const speed = (n: number) => n / cost(n)
  const most = Math.max(...sizeLadder(64).map(speed))
  let served = 0
  for (let i = 0; i < seen.length; i++) {
    const from = Math.max(seen[i]!.at, fromMs)
    const to = Math.min(seen[i + 1]?.at ?? toMs, toMs)
    if (to > from) served += (to - from) * (speed(seen[i]!.limit) / most)
  }
  return served / (toMs - fromMs)
}

describe('adaptive batch size on a real clock: it follows a cost that changes, with 64 callers in a closed loop', () => {
  it('to a cost that grows with n²: from 64 to 6, 8 or 11, within 2 s', async () => {
    expect(within10(overhead, 64)).toEqual([64])
    expect(within10(superlinear, 64)).toEqual([6, 8, 11])
    const seen = await followSwitch(overhead, superlinear, 1000, 3000)
    // Until the switch it held 64. It reaches the best sizes within 2 s of the switch, and over the
    // second after, the limits in force serve on average within 10% of the best size's items/s (on
    // a quiet machine it holds the best sizes throughout; on a loaded one its neighbours, which
    // serve 85%, may read as good as it for a while).
    expect(seen[0]!.limit).toBe(64)
    expect(reachedAt(seen, [6, 8, 11])).toBeLessThan(2000)
    expect(servedOfBest(seen, superlinear, 2000, 3000)).toBeGreaterThan(0.9)
  })

  it('back to a fixed overhead: up to 64, within 2 s', async () => {
    const seen = await followSwitch(superlinear, overhead, 1000, 3000)
    // Where the climb from 1 has got to in the first second does not matter here, as long as it is far below 64.
    expect(seen[0]!.limit).toBeLessThanOrEqual(16)
    expect(reachedAt(seen, [64])).toBeLessThan(2000)
    expect(servedOfBest(seen, overhead, 2000, 3000)).toBeGreaterThan(0.9)
  })
})

const WAIT_TIMEOUT_MS = 1000

/**
 * An adaptive batched function with a long batchWaitTimeoutS and a cheap
 * handler whose batches serve more the larger they are, and the sizes of
 * the batches it ran.
 */
function cheapBatched() {
  const sizes: number[] = []
  const f = batch(
    async (xs: number[]) => {
      sizes.push(xs.length)
      spin(0.2 + 0.01 * xs.length)
      return xs
    },
    { maxBatchSize: 32, batchWaitTimeoutS: WAIT_TIMEOUT_MS / 1000, adaptive: true },
  )
  return { f, sizes }
}

/**
 * `callers` callers of `f` in a closed loop, `calls` calls each on average:
 * how many calls waited half of WAIT_TIMEOUT_MS or more, the slowest call's
 * milliseconds, and the limit when they stop. Stops early once `slowAllowed`
 * calls were that slow.
 */
async function callInLoop(f: ReturnType<typeof cheapBatched>['f'], callers: number, calls: number, slowAllowed = 0) {
  let slowest = 0
  let slow = 0
  let answered = 0
  let stop = false
  let limit = 0
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (!stop) {
        const started = performance.now()
        await f(answered)
        // Once they stop, callers leave one by one, and a batch begun for the last of them may wait
        // for the others as a fixed size would: only the calls answered while all of them call count.
        if (stop) break
        const ms = performance.now() - started
        slowest = Math.max(slowest, ms)
        if (ms >= WAIT_TIMEOUT_MS / 2) slow++
        if (++answered >= callers * calls || slow > slowAllowed) {
          stop = true
          limit = f.stats().batchSizeLimit
        }
      }
    }),
  )
  return { slow, slowest, limit }
}

describe('adaptive batch size on a real clock: no call waits out batchWaitTimeoutS for calls that do not come', () => {
  // A probe above the limit takes more of the calls queued when its batch starts, but the batch
  // starts as one at the limit would; and a limit the load no longer fills gives way once a batch
  // has waited it out. Either wait would cost each call of every such batch batchWaitTimeoutS.
  it('a lone caller: every batch is full at a limit of 1, and none waits out batchWaitTimeoutS for a second call', async () => {
    const { slowest, limit } = await callInLoop(cheapBatched().f, 1, 40)
    expect(slowest).toBeLessThan(WAIT_TIMEOUT_MS / 2)
    expect(limit).toBe(1)
  })

  it('as many callers as its limit settles on: they are batched all together, and no probe waits for more', async () => {
    const { f, sizes } = cheapBatched()
    const { slowest, limit } = await callInLoop(f, 8, 150)
    expect(slowest).toBeLessThan(WAIT_TIMEOUT_MS / 2)
    // Larger batches serve more, so the limit climbs to take the eight callers in one batch. (Now
    // and then a probe below it splits them: the size most batches held is asserted, not every one.)
    expect(limit).toBe(8)
    expect(mostSeen(sizes.slice(-40)).limit).toBe(8)
  })

  it('a load that falls below the limit: after one batch waits out batchWaitTimeoutS, batches are full at what the load fills', async () => {
    const { f } = cheapBatched()
    expect((await callInLoop(f, 8, 150)).limit).toBe(8)
    // One caller of eight leaves: a batch at the limit now waits for an eighth call that never comes.
    // Once one has waited it out, the seven are a full batch. (Kept at 8, every batch waited 1 s.)
    const { slow, limit } = await callInLoop(f, 7, 100, 7)
    expect(slow).toBeLessThanOrEqual(7)
    expect(limit).toBe(7)
  })
})
