import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/conformance/**/*.test.ts', 'test/node/**/*.test.ts', 'test/workers/**/*.test.ts', 'test/browser/**/*.test.ts', 'test/e2e/**/*.test.ts'],
    // serve() and the demo Worker import the generated dashboard page.
    globalSetup: ['test/setup/build-dashboard.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
