import { afterEach, describe, expect, it, vi } from 'vitest'
import { RequestTimeoutError } from '../../../src/errors.js'
import { raceTimeout, RequestScope } from '../../../src/deployment/request-scope.js'

describe('RequestScope as a cancel signal', () => {
  it('fires its listeners, functions and objects alike, once, with its reason', () => {
    const source = new RequestScope({ origin: 'http' })
    const heard: string[] = []
    source.addEventListener('abort', () => heard.push('function'))
    source.addEventListener('abort', { handleEvent: () => heard.push('object') })
    const reason = new Error('gone')
    source.cancel(reason)
    source.cancel(new Error('again'))
    expect(heard).toEqual(['function', 'object'])
    expect(source.aborted).toBe(true)
    expect(source.reason).toBe(reason)
  })

  it('forgets a removed listener, and keeps none added after it fired', () => {
    const source = new RequestScope({ origin: 'http' })
    let calls = 0
    const listener = () => calls++
    source.addEventListener('abort', listener)
    source.removeEventListener('abort', listener)
    source.cancel(new Error('gone'))
    source.addEventListener('abort', listener)
    expect(calls).toBe(0)
  })

  it('times its deadline from one reading of the clock: a tick past the deadline in between never makes a negative delay', () => {
    const deadline = 1_000_000
    // The clock reads just before the deadline, then just after it, as when it ticks mid-call.
    const clock = vi
      .spyOn(Date, 'now')
      .mockReturnValueOnce(deadline - 1)
      .mockReturnValue(deadline + 1)
    const timers = vi.spyOn(globalThis, 'setTimeout')
    const scope = new RequestScope({ origin: 'http', deadline })
    try {
      void scope.signal
      expect(scope.aborted).toBe(false)
      expect(timers.mock.calls.map(([, delay]) => delay)).toEqual([1])
    } finally {
      scope.close()
      timers.mockRestore()
      clock.mockRestore()
    }
  })
})

describe('RequestScope options', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it("with callerEnforcesDeadline, its signal is the caller's and it keeps no timer of its own", () => {
    vi.useFakeTimers()
    const caller = new AbortController()
    const scope = new RequestScope({ origin: 'handle', deadline: Date.now() + 1000, callerSignal: caller.signal, callerEnforcesDeadline: true })
    expect(scope.signal).toBe(caller.signal)
    expect(vi.getTimerCount()).toBe(0)
    scope.close()
  })

  it('without it, the scope is its own signal and aborts at the deadline with a RequestTimeoutError', () => {
    vi.useFakeTimers()
    const caller = new AbortController()
    const scope = new RequestScope({ origin: 'handle', deadline: Date.now() + 1000, callerSignal: caller.signal, idempotent: true })
    expect(scope.signal).toBe(scope)
    expect(scope.idempotent).toBe(true)
    vi.advanceTimersByTime(1000)
    expect(scope.aborted).toBe(true)
    expect(scope.reason).toBeInstanceOf(RequestTimeoutError)
    expect(caller.signal.aborted).toBe(false)
    scope.close()
  })
})

describe('raceTimeout(): a hook of the user that no request waits on (checkHealth, dispose, release)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('fails with RequestTimeoutError once the time has passed, when the hook hangs', async () => {
    vi.useFakeTimers()
    const raced = raceTimeout(new Promise<never>(() => undefined), 30_000)
    const settled = vi.fn()
    raced.catch(settled)
    await vi.advanceTimersByTimeAsync(29_999)
    expect(settled).not.toHaveBeenCalled()
    await vi.advanceTimersByTimeAsync(1)
    await expect(raced).rejects.toBeInstanceOf(RequestTimeoutError)
  })

  it("gives the hook's own result or error, and leaves no timer behind", async () => {
    vi.useFakeTimers()
    await expect(raceTimeout(Promise.resolve('done'), 30_000)).resolves.toBe('done')
    await expect(raceTimeout(Promise.reject(new Error('cannot release')), 30_000)).rejects.toThrow('cannot release')
    expect(vi.getTimerCount()).toBe(0)
  })
})
