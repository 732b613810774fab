/**
 * Train the regional example's house-price models, one per market in
 * examples/regional-house-price/regions.ts, into that example's model/
 * folder (<region>.onnx and <region>.meta.json). Seeded: reruns write
 * byte-identical files.
 *
 *   npm run models:regional-house-price
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { REGIONS } from '../../../examples/regional-house-price/regions.js'

const train = fileURLToPath(new URL('./train.ts', import.meta.url))
const out = fileURLToPath(new URL('../../../examples/regional-house-price/model/', import.meta.url))
const tsx = fileURLToPath(new URL('../../../node_modules/tsx/dist/cli.mjs', import.meta.url))

for (const [region, { priceLevel, seed }] of Object.entries(REGIONS)) {
  console.log(`--- ${region}: prices x${priceLevel}, seed ${seed}`)
  execFileSync(process.execPath, [tsx, train, '--out', out, '--name', region, '--seed', String(seed), '--price-level', String(priceLevel)], {
    stdio: 'inherit',
  })
}
