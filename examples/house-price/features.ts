/**
 * The house-price model's input: 8 numbers in the order of the California
 * housing dataset. The model (./model/house-price.onnx) takes float32
 * `features` [batch, 8] and returns float32 `price` [batch, 1] in units of
 * $100,000. It was trained on synthetic data (scripts/models/house-price/),
 * so its predictions are only meaningful inside the ranges below.
 */
export const FEATURE_NAMES = ['MedInc', 'HouseAge', 'AveRooms', 'AveBedrms', 'Population', 'AveOccup', 'Latitude', 'Longitude'] as const

export type FeatureName = (typeof FEATURE_NAMES)[number]
export const NUM_FEATURES = FEATURE_NAMES.length
export const INPUT_NAME = 'features'
export const OUTPUT_NAME = 'price'
/** One unit of the model's output, in US dollars. */
export const PRICE_UNIT_USD = 100_000

/**
 * Accepted [min, max] per feature, inclusive. They are a little wider than
 * the training data (see scripts/models/README.md) and reject values that
 * cannot describe a California block group, such as a latitude of 80.
 */
export const FEATURE_RANGES: Readonly<Record<FeatureName, readonly [min: number, max: number]>> = {
  MedInc: [0, 20], // median income, $10,000s
  HouseAge: [0, 100], // median house age, years
  AveRooms: [1, 20], // average rooms per household
  AveBedrms: [0.5, 5], // average bedrooms per household
  Population: [1, 50_000], // people in the block group
  AveOccup: [0.5, 20], // average people per household
  Latitude: [32, 42.5], // degrees north (California)
  Longitude: [-124.5, -114], // degrees east (California)
}

/**
 * Why a `features` value was refused. `kind` tells a server which status to
 * use: 'shape' (not an array of 8 finite numbers) is a malformed request
 * (400), 'range' (well-formed but implausible) is unprocessable (422).
 */
export class FeatureError extends Error {
  override readonly name = 'FeatureError'
  constructor(
    readonly kind: 'shape' | 'range',
    message: string,
  ) {
    super(message)
  }
}

/** Validate a request's `features` and return them as numbers in model order. */
export function parseFeatures(value: unknown): number[] {
  const expected = `"features" must be an array of ${NUM_FEATURES} numbers: ${FEATURE_NAMES.join(', ')}`
  if (!Array.isArray(value)) throw new FeatureError('shape', `${expected}; received ${describe(value)}`)
  if (value.length !== NUM_FEATURES) throw new FeatureError('shape', `${expected}; received ${value.length} values`)
  return FEATURE_NAMES.map((name, i) => {
    const v: unknown = value[i]
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new FeatureError('shape', `features[${i}] (${name}) must be a finite number, received ${describe(v)}`)
    }
    const [min, max] = FEATURE_RANGES[name]
    if (v < min || v > max) throw new FeatureError('range', `features[${i}] (${name}) = ${v} is outside the plausible range [${min}, ${max}]`)
    return v
  })
}

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'number') return String(v)
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 20 ? `${v.slice(0, 20)}...` : v)}`
  return typeof v
}
