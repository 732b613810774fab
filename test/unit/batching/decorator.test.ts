import { describe, expect, expectTypeOf, it } from 'vitest'
import { BatchHandlerError, batch, batchedMethodsOf, type BatchInfo } from '../../../src/index.js'
import { typeErrorsOf } from '../../support/type-errors.js'

class BatchAdder {
  shapes: number[] = []

  @batch({ maxBatchSize: 4 })
  async handleBatch(numbers: number[]): Promise<number[]> {
    this.shapes.push(numbers.length)
    await new Promise((r) => setTimeout(r, 2))
    return numbers.map((n) => n + 1)
  }

  async add(n: number): Promise<number> {
    const [sum] = await this.handleBatch([n]) // type-checks without casts
    return sum!
  }
}

describe('@batch decorator (TC39)', () => {
  it('batches concurrent calls of a method; each call passes and gets a list', async () => {
    const adder = new BatchAdder()
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => adder.add(i)))
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(Math.max(...adder.shapes)).toBeLessThanOrEqual(4)
    expect(adder.shapes.reduce((a, b) => a + b, 0)).toBe(9)
    expectTypeOf<BatchAdder['handleBatch']>().parameters.toEqualTypeOf<[number[]]>()
  })

  it('keeps one queue per instance and exposes it for metrics', async () => {
    const a = new BatchAdder()
    const b = new BatchAdder()
    await Promise.all([a.add(1), b.add(2), a.add(3)])
    expect(a.shapes.reduce((x, y) => x + y, 0)).toBe(2)
    expect(b.shapes).toEqual([1])
    expect(batchedMethodsOf(a).get('handleBatch')?.stats().itemsRun).toBe(2)
  })

  it("a call's items stay together and count toward maxBatchSize", async () => {
    const adder = new BatchAdder()
    const out = await Promise.all([adder.handleBatch([1, 2, 3]), adder.handleBatch([4, 5]), adder.handleBatch([6])])
    expect(out).toEqual([[2, 3, 4], [5, 6], [7]])
    expect(adder.shapes.every((size) => size <= 4)).toBe(true)
    await expect(adder.handleBatch([1, 2, 3, 4, 5])).rejects.toThrow(/size 5 but a batch holds at most 4/)
  })

  it('rejects a call that does not pass a list, saying how to call it', async () => {
    const adder = new BatchAdder()
    await expect(adder.handleBatch(1 as unknown as number[])).rejects.toThrow(
      'handleBatch() is a @batch method: call it with a list of items, e.g. this.handleBatch([item])',
    )
  })

  it('a returned Error fails only the call whose items hold it; a wrong length fails all', async () => {
    class Picky {
      @batch()
      async check(xs: number[], _info?: BatchInfo): Promise<(number | Error)[]> {
        if (xs.includes(99)) return xs.slice(1)
        return xs.map((x) => (x < 0 ? new RangeError(`${x} is negative`) : x))
      }
    }
    const p = new Picky()
    const [ok, bad] = await Promise.allSettled([p.check([1, 2]), p.check([3, -4])])
    expect(ok).toEqual({ status: 'fulfilled', value: [1, 2] })
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: '-4 is negative' } })
    const wrong = await Promise.allSettled([p.check([99]), p.check([5])])
    for (const r of wrong) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(BatchHandlerError)
  })

  it('rejects invalid options when the class is defined, before any instance exists', () => {
    const define = () => {
      class Invalid {
        @batch({ maxBatchSize: 0 })
        async handle(xs: number[]): Promise<number[]> {
          return xs
        }
      }
      return Invalid
    }
    expect(define).toThrow(RangeError)
    expect(define).toThrow(/maxBatchSize must be a positive integer .*received 0/)
  })

  it('gives each instance its own options, so a setter on one leaves the others alone', () => {
    const a = new BatchAdder()
    const b = new BatchAdder()
    batchedMethodsOf(a).get('handleBatch')!.setMaxBatchSize(2)
    expect(batchedMethodsOf(a).get('handleBatch')!.options.maxBatchSize).toBe(2)
    expect(batchedMethodsOf(b).get('handleBatch')!.options.maxBatchSize).toBe(4)
  })

  describe('under experimentalDecorators (legacy decorators)', () => {
    const legacyClass = `import { batch } from '../../src/index.js'
export class Adder {
  @batch({ maxBatchSize: 4 })
  async handleBatch(numbers: number[]): Promise<number[]> {
    return numbers.map((n) => n + 1)
  }

  @batch
  async bare(numbers: number[]): Promise<number[]> {
    return numbers
  }
}
`
    it('the type error says @batch is a standard decorator and what to do instead', () => {
      const errors = typeErrorsOf(legacyClass, { experimentalDecorators: true })
      expect(errors).toHaveLength(2)
      for (const [i, line] of [3, 8].entries()) {
        expect(errors[i]).toMatch(new RegExp(`^${line}: `))
        expect(errors[i]).toContain("edgeserve's @batch is a standard (TC39) decorator")
        expect(errors[i]).toContain('remove experimentalDecorators from tsconfig.json, or batch with a field')
      }
      expect(typeErrorsOf(legacyClass, {})).toEqual([]) // the same class as a standard decorator
    })

    // tsc, tsx and esbuild call a legacy method decorator with (prototype, name, descriptor).
    it.each([
      [
        '@batch({...})',
        (proto: object, descriptor: PropertyDescriptor) =>
          // @ts-expect-error: a legacy call, refused by its descriptor's type, whose text is the message above
          batch({ maxBatchSize: 4 })(proto, 'handleBatch', descriptor),
      ],
      [
        '@batch',
        (proto: object, descriptor: PropertyDescriptor) =>
          // @ts-expect-error: the same for @batch without options
          batch(proto, 'handleBatch', descriptor),
      ],
    ])('%s run as a legacy decorator throws, saying what to do instead', (_, decorate) => {
      class Adder {
        async handleBatch(numbers: number[]): Promise<number[]> {
          return numbers
        }
      }
      const descriptor = Object.getOwnPropertyDescriptor(Adder.prototype, 'handleBatch')!
      expect(() => decorate(Adder.prototype, descriptor)).toThrow(
        "edgeserve's @batch is a standard (TC39) decorator, but handleBatch was decorated as a legacy one " +
          '("experimentalDecorators": true in tsconfig.json, which tsc, tsx and esbuild follow): remove experimentalDecorators, ' +
          'or batch with a field, called with one item: handleBatch = batch(async (items) => results, { maxBatchSize: 4 })',
      )
    })
  })

  it('works bare, as @batch without options', async () => {
    class Doubler {
      @batch
      async twice(xs: number[]): Promise<number[]> {
        return xs.map((x) => x * 2)
      }
    }
    await expect(new Doubler().twice([1, 2])).resolves.toEqual([2, 4])
  })
})
