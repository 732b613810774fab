import { describe, expect, it } from 'vitest'
import { batch } from '../../../src/index.js'

const handler = async (xs: number[]) => xs

describe('option validation', () => {
  const cases: [string, Record<string, unknown>, ErrorConstructor, RegExp][] = [
    ['maxBatchSize', { maxBatchSize: 0 }, RangeError, /maxBatchSize must be a positive integer .*received 0/],
    ['maxBatchSize', { maxBatchSize: 2.5 }, RangeError, /maxBatchSize .*received 2\.5/],
    ['maxBatchSize', { maxBatchSize: '4' }, TypeError, /maxBatchSize must be a positive integer, received "4"/],
    ['batchWaitTimeoutS', { batchWaitTimeoutS: -1 }, RangeError, /batchWaitTimeoutS .*0 or more, received -1/],
    ['batchWaitTimeoutS', { batchWaitTimeoutS: Infinity }, RangeError, /batchWaitTimeoutS must be a finite number/],
    ['batchWaitTimeoutS', { batchWaitTimeoutS: '0.1' }, TypeError, /batchWaitTimeoutS .*received "0\.1"/],
    ['maxConcurrentBatches', { maxConcurrentBatches: 0 }, RangeError, /maxConcurrentBatches .*received 0/],
    ['maxQueuedRequests', { maxQueuedRequests: -1 }, RangeError, /maxQueuedRequests must be a positive integer or Infinity .*received -1/],
    ['maxQueuedRequests', { maxQueuedRequests: null }, TypeError, /maxQueuedRequests .*received null/],
    ['batchSizeFn', { batchSizeFn: 3 }, TypeError, /batchSizeFn must be a function \(item\) => number, received 3/],
    ['batchKey', { batchKey: 'origin' }, TypeError, /batchKey must be a function \(item, context\) => string, received "origin"/],
    ['strideS', { strideS: Number.NaN }, RangeError, /strideS .*received NaN/],
    ['allowSmallBatch', { allowSmallBatch: 'no' }, TypeError, /allowSmallBatch must be true or false, received "no"/],
    ['onBatchError', { onBatchError: 'retry' }, TypeError, /onBatchError must be 'fail-all' or 'isolate', received "retry"/],
    ['adaptive', { adaptive: 'on' }, TypeError, /adaptive must be true, false or an object like \{ latencyTargetMs: 50 \}, received "on"/],
    [
      'adaptive',
      { adaptive: { latencyTargetMs: '50' } },
      TypeError,
      /adaptive\.latencyTargetMs must be a number of milliseconds, e\.g\. \{ latencyTargetMs: 50 \}, received "50"/,
    ],
    [
      'adaptive',
      { adaptive: { latencyTargetMs: -5 } },
      RangeError,
      /adaptive\.latencyTargetMs must be a finite number of milliseconds greater than 0, received -5/,
    ],
    ['adaptive', { adaptive: { latencyTarget: 50 } }, TypeError, /adaptive has no option "latencyTarget"; its one option is latencyTargetMs/],
    ['unknown option', { maxBatchsize: 4 }, TypeError, /batch\(\) has no option "maxBatchsize"; known options: maxBatchSize/],
  ]
  for (const [name, options, type, message] of cases) {
    it(`rejects a bad ${name} (${JSON.stringify(options) ?? ''}) with ${type.name}`, () => {
      const attempt = () => batch(handler, options as never)
      expect(attempt).toThrow(type)
      expect(attempt).toThrow(message)
    })
  }

  it('rejects options that are not an object', () => {
    expect(() => batch(handler, 4 as never)).toThrow(/batch\(\) options must be an object, received 4/)
  })

  it('rejects a handler that is not a function', () => {
    expect(() => batch.stream('x' as never)).toThrow(TypeError)
  })

  it('rejects a first argument that is not a handler at once, saying what to pass', () => {
    for (const notAFunction of [undefined, null, 42, 'handler', { maxBatchSize: 4 }]) {
      const attempt = () => batch(notAFunction as never, { maxBatchSize: 4 })
      expect(attempt).toThrow(TypeError)
      expect(attempt).toThrow(
        /batch\(handler, options\) needs a handler function \(items\) => results first, received .*; to decorate a method, pass the options alone/,
      )
    }
    expect(() => batch(42 as never)).toThrow(/batch\(\) needs a handler function \(items\) => results, or options alone to decorate a method .*received 42/)
  })

  it('applies the documented defaults', () => {
    const f = batch(handler)
    expect(f.options).toMatchObject({
      maxBatchSize: 10,
      batchWaitTimeoutS: 0,
      maxConcurrentBatches: 1,
      maxQueuedRequests: Infinity,
      batchSizeFn: undefined,
      batchKey: undefined,
      strideS: 0,
      allowSmallBatch: true,
      onBatchError: 'fail-all',
      adaptive: false,
    })
    expect(f.stats().batchSizeLimit).toBe(10)
  })

  it('takes adaptive as true, false or { latencyTargetMs }, on every form of batch()', () => {
    expect(batch(handler, { adaptive: true }).options.adaptive).toEqual({ latencyTargetMs: undefined })
    expect(batch(handler, { adaptive: false }).options.adaptive).toBe(false)
    expect(batch(handler, { adaptive: {} }).options.adaptive).toEqual({ latencyTargetMs: undefined })
    expect(batch.stream(async function* () {}, { adaptive: { latencyTargetMs: 50 } }).options.adaptive).toEqual({ latencyTargetMs: 50 })
    expect(batch.continuous(() => [], { adaptive: true }).options.adaptive).toEqual({ latencyTargetMs: undefined })
    expect(() => batch({ adaptive: 1 } as never)).toThrow(/adaptive must be true, false or an object like \{ latencyTargetMs: 50 \}, received 1/)
  })

  it('the setters validate their argument', () => {
    const f = batch(handler)
    expect(() => f.setMaxBatchSize(0)).toThrow(/maxBatchSize must be a positive integer .*received 0/)
    expect(() => f.setBatchWaitTimeoutS(-0.5)).toThrow(/batchWaitTimeoutS .*received -0\.5/)
    expect(() => f.setMaxConcurrentBatches(1.5)).toThrow(/maxConcurrentBatches must be a positive integer .*received 1\.5/)
    f.setMaxBatchSize(7)
    f.setBatchWaitTimeoutS(0.25)
    f.setMaxConcurrentBatches(3)
    expect(f.options.maxBatchSize).toBe(7)
    expect(f.options.batchWaitTimeoutS).toBe(0.25)
    expect(f.options.maxConcurrentBatches).toBe(3)
  })

  it("refuses a call's options it cannot use, at the call, and runs the calls beside it", async () => {
    const f = batch(handler)
    // As a JavaScript caller may pass them: TypeScript would refuse each one.
    const call = (options: unknown) => () => f(1, options as never)
    expect(call([])).toThrow(new TypeError(`a batched call's options must be an object like { signal, deadline }, received an array`))
    expect(call({ signal: 5 })).toThrow(new TypeError("signal must be an AbortSignal (an AbortController's signal), received 5"))
    expect(call({ signal: {} })).toThrow(/^signal must be an AbortSignal/)
    expect(call({ deadline: 'soon' })).toThrow(/^deadline must be a time in epoch milliseconds, such as Date\.now\(\) \+ 5000, received "soon"$/)
    expect(call({ deadline: NaN })).toThrow(/received NaN$/)
    expect(call({ context: 'http' })).toThrow(/^context must be an object of facts for batchKey/)
    // Good options still work, in the same batch as a call without any.
    const controller = new AbortController()
    expect(await Promise.all([f(1, { signal: controller.signal, deadline: Date.now() + 60_000, context: { origin: 'http' } }), f(2)])).toEqual([1, 2])
  })

  it('items.map(f) makes plain calls: only an object is options, not the index map passes', async () => {
    // TypeScript asks for a lambda here; JavaScript passes f itself, and map then passes the index.
    const f = batch(handler, { maxBatchSize: 4 }) as (item: number) => Promise<number>
    expect(await Promise.all([5, 6, 7].map(f))).toEqual([5, 6, 7])
    const stream = batch.stream(async function* (xs: number[]) {
      yield xs
    })
    const iterators = [8, 9].map(stream as (item: number) => AsyncIterableIterator<number, undefined>)
    expect(await Promise.all(iterators.map(async (it) => (await it.next()).value))).toEqual([8, 9])
  })
})
