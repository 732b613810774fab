/**
 * GatheredCalls, the isolate's side of carrying calls to a Durable Object
 * together, outside workerd: which items go in one call, when it goes, and
 * what each caller gets. Its transport here is a recording stand-in for the
 * object's RPC stub (named so: only workerd has the real one). In workerd the
 * same is tested end to end in test/workers/coalescing.test.ts.
 */
import { describe, expect, it, vi } from 'vitest'
import {
  GatheredCalls,
  MAX_BYTES_PER_CALL,
  MAX_GATHER_MS,
  MAX_ITEMS_PER_CALL,
  type GatheredCallsTransport,
} from '../../../src/runtime/workers/gathered-calls.js'
import { carriedBytes } from '../../../src/runtime/workers/durable-object-replica.js'
import { RequestCancelledError } from '../../../src/errors.js'

/** A stand-in transport: records each call and each drop; answers each item doubled, when told to. */
function recordingTransport() {
  const calls: number[][] = []
  const drops: number[][] = []
  const kept: Promise<unknown>[] = []
  let answerNow = true
  const held: (() => void)[] = []
  const transport: GatheredCallsTransport<number, number> = {
    async send(items) {
      calls.push([...items])
      if (!answerNow) await new Promise<void>((resolve) => held.push(resolve))
      return items.map((item) => item * 2)
    },
    async drop(items) {
      drops.push([...items])
    },
    keepAlive(work) {
      kept.push(work)
    },
  }
  return {
    transport,
    calls,
    drops,
    kept,
    hold: () => (answerNow = false),
    release: () => held.splice(0).forEach((resolve) => resolve()),
  }
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('GatheredCalls', () => {
  it('carries the items of one moment in one call, each answered with its own answer', async () => {
    const t = recordingTransport()
    const gathered = new GatheredCalls(t.transport)
    const answers = await Promise.all([1, 2, 3, 4].map((item) => gathered.carry(item, 8)))
    expect(answers).toEqual([2, 4, 6, 8])
    expect(t.calls).toEqual([[1, 2, 3, 4]])
  })

  it('waits while items keep joining, a turn at a time, so that requests whose bodies arrive a turn apart share a call', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      const t = recordingTransport()
      const gathered = new GatheredCalls(t.transport)
      const pending = [gathered.carry(1, 8)]
      for (const item of [2, 3]) {
        pending.push(gathered.carry(item, 8))
        vi.advanceTimersToNextTimer() // a turn in which an item joined: the call waits one more
        expect(t.calls).toEqual([])
      }
      vi.advanceTimersToNextTimer() // a turn in which none did
      expect(t.calls).toEqual([[1, 2, 3]])
      expect(await Promise.all(pending)).toEqual([2, 4, 6])
    } finally {
      vi.useRealTimers()
    }
  })

  it('sends a call once a turn passes with no new item: a later item goes in the next call', async () => {
    const t = recordingTransport()
    const gathered = new GatheredCalls(t.transport)
    const first = gathered.carry(1, 8)
    await turn()
    await turn()
    const second = gathered.carry(2, 8)
    expect(await Promise.all([first, second])).toEqual([2, 4])
    expect(t.calls).toEqual([[1], [2]])
  })

  it(`sends a call ${MAX_GATHER_MS} ms after its first item, though items keep joining`, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      const t = recordingTransport()
      const gathered = new GatheredCalls(t.transport)
      const started = Date.now()
      const pending = [gathered.carry(0, 8)]
      while (t.calls.length === 0) {
        pending.push(gathered.carry(pending.length, 8))
        vi.setSystemTime(Date.now() + 1) // each turn takes a millisecond
        vi.advanceTimersToNextTimer()
      }
      expect(Date.now() - started).toBeGreaterThanOrEqual(MAX_GATHER_MS)
      expect(t.calls[0]).toHaveLength(pending.length) // every item until then joined it
      expect(pending).toHaveLength(MAX_GATHER_MS + 1)
      await Promise.all(pending)
    } finally {
      vi.useRealTimers()
    }
  })

  it(`sends a call holding ${MAX_ITEMS_PER_CALL} items at once, and starts the next`, async () => {
    const t = recordingTransport()
    const gathered = new GatheredCalls(t.transport)
    const pending = Array.from({ length: MAX_ITEMS_PER_CALL + 1 }, (_, i) => gathered.carry(i, 8))
    expect(t.calls).toHaveLength(1) // sent within carry(), before any turn
    expect(t.calls[0]).toHaveLength(MAX_ITEMS_PER_CALL)
    await Promise.all(pending)
    expect(t.calls.map((call) => call.length)).toEqual([MAX_ITEMS_PER_CALL, 1])
  })

  it('starts a new call for an item that would take a call past its bytes', async () => {
    const t = recordingTransport()
    const gathered = new GatheredCalls(t.transport)
    const half = MAX_BYTES_PER_CALL / 2
    await Promise.all([gathered.carry(1, half), gathered.carry(2, half), gathered.carry(3, 1)])
    expect(t.calls).toEqual([[1, 2], [3]])
  })

  it('drops the item of a caller that left before its call went, and answers that caller at once', async () => {
    const t = recordingTransport()
    const gathered = new GatheredCalls(t.transport)
    const leaving = new AbortController()
    const left = gathered.carry(1, 8, leaving.signal)
    const staying = gathered.carry(2, 8)
    leaving.abort()
    await expect(left).rejects.toBeInstanceOf(RequestCancelledError)
    expect(await staying).toBe(4)
    expect(t.calls).toEqual([[2]])
    expect(t.drops).toEqual([])
  })

  it('tells the object of a caller that left after its call went, and still answers the others of the call', async () => {
    const t = recordingTransport()
    t.hold()
    const gathered = new GatheredCalls(t.transport)
    const leaving = new AbortController()
    const left = gathered.carry(1, 8, leaving.signal)
    const staying = gathered.carry(2, 8)
    await turn() // the second item joined in the first turn: the call waits one more
    await turn()
    expect(t.calls).toEqual([[1, 2]])
    leaving.abort()
    await expect(left).rejects.toBeInstanceOf(RequestCancelledError)
    expect(t.drops).toEqual([[1]])
    t.release()
    expect(await staying).toBe(4)
  })

  it('fails every item of a call that failed with its error, and goes on with new calls', async () => {
    const failure = Object.assign(new Error('Network connection lost.'), { retryable: true })
    let fail = true
    const gathered = new GatheredCalls<number, number>({
      send: async (items) => {
        if (fail) throw failure
        return items
      },
      drop: async () => undefined,
      keepAlive: () => undefined,
    })
    const results = await Promise.allSettled([gathered.carry(1, 8), gathered.carry(2, 8)])
    expect(results).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ])
    fail = false
    expect(await gathered.carry(3, 8)).toBe(3)
  })

  it('keeps alive, from the request that started it, each call until it is answered', async () => {
    const t = recordingTransport()
    t.hold()
    const gathered = new GatheredCalls(t.transport)
    const answer = gathered.carry(1, 8)
    expect(t.kept).toHaveLength(1) // kept alive from the start, before the call goes
    let settled = false
    void Promise.all(t.kept).then(() => (settled = true))
    await turn()
    await turn()
    expect(settled).toBe(false)
    t.release()
    expect(await answer).toBe(2)
    await Promise.all(t.kept)
  })
})

describe('carriedBytes()', () => {
  it('sizes plain arguments: strings, numbers, bytes, arrays and plain objects', () => {
    expect(carriedBytes(['ab', 1, new Uint8Array(100), [true], { x: new ArrayBuffer(10) }])).toBe(4 + 8 + 100 + 8 + 10)
  })

  it('sends alone arguments that belong to the request that made them: a stream, a Request, a function', () => {
    expect(carriedBytes([new ReadableStream()])).toBe(-1)
    expect(carriedBytes([{ nested: [new Request('http://x.test/')] }])).toBe(-1)
    expect(carriedBytes([() => 1])).toBe(-1)
  })

  it('sends alone arguments too many to size cheaply', () => {
    expect(carriedBytes([Array.from({ length: 2000 }, (_, i) => i)])).toBe(-1)
  })
})
