/**
 * Synthetic "California-housing-like" regression dataset.
 *
 * We cannot ship or download the real California housing data, so we generate
 * rows with the same 8 features (same order, similar ranges) from a fixed,
 * documented formula. The target is deliberately non-linear (distance-to-city
 * bump, logs) so a small MLP has something to learn beyond a linear fit.
 *
 * Features (in column order):
 *   0 MedInc     median income, $10k        exp(N(1.30, 0.45)) clipped to [0.5, 15]
 *   1 HouseAge   median house age, years    uniform integer in [1, 52]
 *   2 AveRooms   average rooms / household  4.0 + 0.35*MedInc + N(0, 0.8), clipped to [2, 10]
 *   3 AveBedrms  average bedrooms           1.0 + 0.05*(AveRooms - 5) + N(0, 0.08), clipped to [0.7, 2]
 *   4 Population block population           exp(N(7.0, 0.7)) clipped to [50, 10000]
 *   5 AveOccup   average occupancy          1.2 + exp(N(0.3, 0.35)) clipped to [1, 6]
 *   6 Latitude   degrees                    see location below
 *   7 Longitude  degrees                    see location below
 *
 * Location: with probability 0.6 the block is near a city, chosen with equal
 * probability from Los Angeles (34.05, -118.25) and San Francisco
 * (37.77, -122.42), offset by N(0, 0.5) degrees on each axis; otherwise it is
 * uniform in the box lat [32.5, 42.0], lon [-124.3, -114.3].
 *
 * Target, price in units of $100k:
 *   d     = min Euclidean distance in degrees from (Latitude, Longitude) to LA or SF
 *   price = 0.10
 *         + 0.42 * MedInc
 *         + 0.008 * HouseAge
 *         + 0.08 * (AveRooms - 5)
 *         - 0.50 * (AveBedrms - 1)
 *         - 0.03 * ln(Population / 1000)
 *         - 0.35 * ln(AveOccup)
 *         + 1.60 * exp(-d^2 / (2 * 0.8^2))
 *         + N(0, 0.20)
 *   then clipped to [0.15, 5.0] (the real dataset is capped at 5.0 too).
 */
import { NUM_FEATURES } from '../../../examples/house-price/features.js'
import { Prng } from '../lib/prng.js'

const LOS_ANGELES = [34.05, -118.25] as const
const SAN_FRANCISCO = [37.77, -122.42] as const
const CITIES = [LOS_ANGELES, SAN_FRANCISCO] as const

export interface Dataset {
  /** Row-major [n, 8]. */
  x: Float32Array
  /** [n] targets. */
  y: Float32Array
  n: number
}

const clip = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v))

/** The noise-free part of the target, exported so tests can reason about it. */
export function priceFormula(f: ArrayLike<number>): number {
  if (f.length !== NUM_FEATURES) throw new RangeError(`expected ${NUM_FEATURES} features, got ${f.length}`)
  const [medInc, age, rooms, bedrms, pop, occup, lat, lon] = Array.from(f) as [number, number, number, number, number, number, number, number]
  let d = Infinity
  for (const [clat, clon] of CITIES) d = Math.min(d, Math.hypot(lat - clat, lon - clon))
  return (
    0.1 +
    0.42 * medInc +
    0.008 * age +
    0.08 * (rooms - 5) -
    0.5 * (bedrms - 1) -
    0.03 * Math.log(pop / 1000) -
    0.35 * Math.log(occup) +
    1.6 * Math.exp(-(d * d) / (2 * 0.8 * 0.8))
  )
}

/**
 * `priceLevel` scales every price before clipping: the regional example's
 * models are trained on markets dearer or cheaper than this one (1).
 */
export function generateDataset(n: number, seed: number, priceLevel = 1): Dataset {
  const rng = new Prng(seed)
  const x = new Float32Array(n * NUM_FEATURES)
  const y = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    const medInc = clip(Math.exp(rng.normal(1.3, 0.45)), 0.5, 15)
    const age = rng.int(1, 52)
    const rooms = clip(4 + 0.35 * medInc + rng.normal(0, 0.8), 2, 10)
    const bedrms = clip(1 + 0.05 * (rooms - 5) + rng.normal(0, 0.08), 0.7, 2)
    const pop = clip(Math.exp(rng.normal(7, 0.7)), 50, 10000)
    const occup = clip(1.2 + Math.exp(rng.normal(0.3, 0.35)), 1, 6)
    let lat: number
    let lon: number
    if (rng.next() < 0.6) {
      const [clat, clon] = rng.next() < 0.5 ? LOS_ANGELES : SAN_FRANCISCO
      lat = clat + rng.normal(0, 0.5)
      lon = clon + rng.normal(0, 0.5)
    } else {
      lat = rng.uniform(32.5, 42)
      lon = rng.uniform(-124.3, -114.3)
    }
    const row = [medInc, age, rooms, bedrms, pop, occup, lat, lon]
    // Round through float32 first so the target is computed from exactly the
    // feature values the model will see.
    x.set(row, i * NUM_FEATURES)
    const stored = x.subarray(i * NUM_FEATURES, (i + 1) * NUM_FEATURES)
    y[i] = clip(priceLevel * (priceFormula(stored) + rng.normal(0, 0.2)), 0.15, 5)
  }
  return { x, y, n }
}
