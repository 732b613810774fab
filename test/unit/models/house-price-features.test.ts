import { describe, expect, it } from 'vitest'
import { FEATURE_NAMES, FEATURE_RANGES, FeatureError, NUM_FEATURES, parseFeatures } from '../../../examples/house-price/features.js'
import { generateDataset } from '../../../scripts/models/house-price/dataset.js'

const valid = [8.3252, 41, 6.98, 1.02, 322, 2.55, 37.88, -122.23]

function featureError(value: unknown): FeatureError {
  try {
    parseFeatures(value)
  } catch (error) {
    expect(error).toBeInstanceOf(FeatureError)
    return error as FeatureError
  }
  throw new Error('parseFeatures did not throw')
}

describe('parseFeatures', () => {
  it('returns 8 plausible numbers unchanged, in model order', () => {
    expect(NUM_FEATURES).toBe(8)
    expect(parseFeatures(valid)).toEqual(valid)
  })

  it('accepts every row of the training distribution', () => {
    const { x, n } = generateDataset(2000, 42)
    for (let i = 0; i < n; i++) {
      const row = Array.from(x.subarray(i * NUM_FEATURES, (i + 1) * NUM_FEATURES))
      expect(() => parseFeatures(row)).not.toThrow()
    }
  })

  it.each([
    ['a missing value', undefined, /received undefined/],
    ['an object', { MedInc: 8 }, /must be an array of 8 numbers/],
    ['7 values', valid.slice(0, 7), /received 7 values/],
    ['9 values', [...valid, 1], /received 9 values/],
    ['a string', ['8.3', ...valid.slice(1)], /features\[0\] \(MedInc\) must be a finite number, received the string "8.3"/],
    ['null', [...valid.slice(0, 4), null, ...valid.slice(5)], /features\[4\] \(Population\) must be a finite number, received null/],
    ['NaN', [...valid.slice(0, 7), Number.NaN], /features\[7\] \(Longitude\) must be a finite number/],
    ['Infinity', [Infinity, ...valid.slice(1)], /features\[0\] \(MedInc\) must be a finite number/],
  ])('refuses %s as malformed (kind "shape")', (_, value, message) => {
    const error = featureError(value)
    expect(error.kind).toBe('shape')
    expect(error.message).toMatch(message)
  })

  it('refuses a value outside its range (kind "range"), naming the feature and the range', () => {
    FEATURE_NAMES.forEach((name, i) => {
      const [min, max] = FEATURE_RANGES[name]
      for (const v of [min - 1, max + 1]) {
        const row = valid.slice()
        row[i] = v
        const error = featureError(row)
        expect(error.kind).toBe('range')
        expect(error.message).toContain(`features[${i}] (${name}) = ${v} is outside the plausible range [${min}, ${max}]`)
      }
      const atLimits = valid.slice()
      atLimits[i] = min
      expect(parseFeatures(atLimits)[i]).toBe(min)
      atLimits[i] = max
      expect(parseFeatures(atLimits)[i]).toBe(max)
    })
  })
})
