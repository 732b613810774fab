/**
 * The reliability suite: real servers on loopback, run apart from `npm test`.
 *
 *   npx vitest run --config test/reliability/vitest.config.ts
 *
 * Files run one at a time, in name order (the load tests need both CPU cores,
 * and 9-report.test.ts must come last: it checks every error body the suite
 * received, writes results/latest.json and regenerates docs/reliability.md).
 */
import { fileURLToPath } from 'node:url'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { defineConfig } from 'vitest/config'
import { sourceEnv, sourcePoolOptions, sourceResolve } from '../setup/source-conditions.js'

class ByName extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => a.moduleId.localeCompare(b.moduleId))
  }
}

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  // The suite runs edgeserve from src/ (see test/setup/source-conditions.ts).
  ...sourceResolve,
  test: {
    include: ['test/reliability/**/*.test.ts'],
    globalSetup: ['test/setup/build-pages.ts', 'test/reliability/global-setup.ts'],
    fileParallelism: false,
    pool: 'forks',
    poolOptions: sourcePoolOptions,
    sequence: { sequencer: ByName },
    testTimeout: 120_000,
    hookTimeout: 90_000,
    teardownTimeout: 30_000,
    env: {
      ...sourceEnv,
      // Miniflare would fetch https://workers.cloudflare.com/cf.json: this suite stays on loopback.
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
      WRANGLER_SEND_METRICS: 'false',
      NO_COLOR: '1',
    },
  },
})
