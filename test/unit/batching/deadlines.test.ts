import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DeadlineTimer } from '../../../src/batching/deadlines.js'

describe('DeadlineTimer', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('expires each call when its own deadline passes, in any order of watching', () => {
    const expired: string[] = []
    const timer = new DeadlineTimer<string>((entry) => expired.push(entry))
    const now = Date.now()
    timer.watch('late', now + 30)
    timer.watch('early', now + 10)
    timer.watch('middle', now + 20)
    vi.advanceTimersByTime(10)
    expect(expired).toEqual(['early'])
    vi.advanceTimersByTime(10)
    expect(expired).toEqual(['early', 'middle'])
    vi.advanceTimersByTime(10)
    expect(expired).toEqual(['early', 'middle', 'late'])
    expect(vi.getTimerCount()).toBe(0)
  })

  it('never expires a forgotten call, and lets the process sleep once nothing is watched', () => {
    const expired: string[] = []
    const timer = new DeadlineTimer<string>((entry) => expired.push(entry))
    const now = Date.now()
    const a = timer.watch('a', now + 10)
    const b = timer.watch('b', now + 20)
    timer.forget(a)
    timer.forget(a) // twice is harmless
    vi.advanceTimersByTime(15)
    expect(expired).toEqual([])
    timer.forget(b)
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(100)
    expect(expired).toEqual([])
  })

  it('holds a call only while it is watched: a forgotten or expired watch links to no other call', () => {
    // A watch that kept its neighbours would keep every call watched after
    // it reachable from wherever the watch itself lingers (an old-generation
    // object is a root of V8's minor GCs): calls would outlive their answers.
    const timer = new DeadlineTimer<object>((entry) => entry)
    const now = Date.now()
    const watches = Array.from({ length: 5 }, (_, i) => timer.watch({ i }, now + 10 + i))
    timer.forget(watches[2]!)
    expect(watches[2]!.prev).toBeUndefined()
    expect(watches[2]!.next).toBeUndefined()
    vi.advanceTimersByTime(11) // the first two pass
    for (const watch of watches.slice(0, 3)) expect([watch.prev, watch.next]).toEqual([undefined, undefined])
    expect(watches[3]!.next).toBe(watches[4])
  })

  it('a call that forgets another while it expires does not stop the others from expiring', () => {
    const expired: string[] = []
    const now = Date.now()
    let other: ReturnType<DeadlineTimer<string>['watch']> | undefined
    const timer = new DeadlineTimer<string>((entry) => {
      expired.push(entry)
      if (entry === 'first') timer.forget(other!)
    })
    timer.watch('first', now + 5)
    other = timer.watch('second', now + 5)
    timer.watch('third', now + 5)
    timer.watch('fourth', now + 50)
    vi.advanceTimersByTime(5)
    expect(expired).toEqual(['first', 'third'])
    vi.advanceTimersByTime(45)
    expect(expired).toEqual(['first', 'third', 'fourth'])
  })

  it('a call watched while another expires keeps its own, earlier deadline', () => {
    const expired: string[] = []
    const now = Date.now()
    const timer = new DeadlineTimer<string>((entry) => {
      expired.push(entry)
      if (entry === 'first') timer.watch('watched during expiry', Date.now() + 5)
    })
    timer.watch('first', now + 10)
    timer.watch('late', now + 100)
    vi.advanceTimersByTime(10)
    expect(expired).toEqual(['first'])
    vi.advanceTimersByTime(5)
    expect(expired).toEqual(['first', 'watched during expiry'])
    vi.advanceTimersByTime(85)
    expect(expired).toEqual(['first', 'watched during expiry', 'late'])
  })
})
