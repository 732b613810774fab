/**
 * An esbuild plugin that bundles the engine with another loop-turn budget
 * (`TURN_BUDGET_MS` in src/batching/loop-turn.ts): for counting a call's
 * instructions without the turns (./engine-instructions.ts) and for timing
 * the engine at several budgets (./turn-budget.ts).
 */
import { readFileSync } from 'node:fs'
import type { Plugin } from 'esbuild'

const BUDGET = /export const TURN_BUDGET_MS = [\d.e]+\b/

export function turnBudgetPlugin(budgetMs: number): Plugin {
  return {
    name: 'turn-budget',
    setup(build) {
      build.onLoad({ filter: /batching[\\/]loop-turn\.ts$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8')
        if (!BUDGET.test(source)) throw new Error('TURN_BUDGET_MS not found in loop-turn.ts')
        return { contents: source.replace(BUDGET, `export const TURN_BUDGET_MS = ${budgetMs}`), loader: 'ts' }
      })
    },
  }
}
