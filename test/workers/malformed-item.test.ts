/**
 * A malformed item fails alone, by default, in real workerd:
 * each predictor a Durable Object, the same burst as on Node
 * (test/support/malformed-item-suite.ts).
 */
import { workerForTests } from '../support/workerd.js'
import { describeMalformedItem } from '../support/malformed-item-suite.js'

const worker = workerForTests(new URL('./wrangler.toml', import.meta.url))

describeMalformedItem('workerd', () => worker.url)
