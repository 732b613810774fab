import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/node/**/*.test.ts'],
    testTimeout: 20_000,
  },
})
