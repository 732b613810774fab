/**
 * The package as users get it: `npm run test:package` packs the tarball once
 * (global-setup.ts) and installs it into fresh projects under the system's
 * temp dir, which npm fills from its ordinary cache. Nothing here reads the
 * repository's src/: the projects resolve 'edgeserve' from their own
 * node_modules, without the "edgeserve-source" condition.
 *
 * Files run one at a time: each installs packages and runs wrangler, tsc or
 * Vite, and the machine may be shared.
 */
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/package/**/*.test.ts'],
    globalSetup: ['test/package/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
})
