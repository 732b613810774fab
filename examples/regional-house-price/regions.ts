/**
 * The markets the regional example serves, one house-price model each,
 * trained by `npm run models:regional-house-price` on the house-price
 * dataset with its prices scaled by the market's level (and its own seed).
 */
export const REGIONS = {
  north: { priceLevel: 1.35, seed: 101 },
  south: { priceLevel: 1, seed: 202 },
  central: { priceLevel: 0.7, seed: 303 },
} as const

export type Region = keyof typeof REGIONS

export function isRegion(id: string): id is Region {
  return Object.hasOwn(REGIONS, id)
}
