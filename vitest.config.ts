import { defineConfig } from 'vitest/config'
import { sourceEnv, sourcePoolOptions, sourceResolve } from './test/setup/source-conditions.js'

export default defineConfig({
  // The tests run edgeserve from src/ (see test/setup/source-conditions.ts).
  ...sourceResolve,
  test: {
    include: [
      'test/unit/**/*.test.ts',
      'test/conformance/**/*.test.ts',
      'test/node/**/*.test.ts',
      'test/workers/**/*.test.ts',
      'test/browser/**/*.test.ts',
      'test/e2e/**/*.test.ts',
    ],
    // serve(), the demo Worker and the OCR example import the generated pages.
    globalSetup: ['test/setup/build-pages.ts'],
    poolOptions: sourcePoolOptions,
    env: sourceEnv,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
