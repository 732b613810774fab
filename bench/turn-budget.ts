/**
 * What the loop-turn budget costs a chain of cheap batches: the engine
 * bench's closed loop (./engine-workload.ts) through `batch()`, bundled with
 * several values of `TURN_BUDGET_MS` (src/batching/loop-turn.ts), each in a
 * worker thread of its own (./engine-workers.ts), rounds interleaved. Not
 * part of `npm run bench`:
 *
 *   npx tsx bench/turn-budget.ts [--rounds 20]
 *
 * Prints a table and, last, one line of JSON: each budget's median
 * nanoseconds a call, and the median over rounds of its calls a second
 * against the same round's with no turns at all.
 */
import { EngineWorkers } from './engine-workers.js'
import { CALLERS, PER_CALLER } from './engine-workload.js'
import { argValue, median } from './lib.js'
import { turnBudgetPlugin } from './turn-budget-plugin.js'

const BUDGETS_MS = [1, 2, 4, 8]
/** A budget no chain of the closed loop reaches: the loop never turns. */
const NO_TURNS = 1e9
const WARMUP = 5
const ROUNDS = Number(argValue('--rounds') ?? 20)

const workers = new EngineWorkers()
try {
  const budgets = [NO_TURNS, ...BUDGETS_MS]
  const engines = []
  for (const budget of budgets) engines.push(await workers.start('edgeserve batch()', 64, [turnBudgetPlugin(budget)]))
  const samples = budgets.map((): number[] => [])
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    // One worker at a time, in an order that rotates each round.
    for (let turn = 0; turn < budgets.length; turn++) {
      const k = (round + turn) % budgets.length
      const ns = await engines[k]!.run()
      if (round >= WARMUP) samples[k]!.push(ns)
    }
  }
  await Promise.all(engines.map((engine) => engine.stop()))

  const calls = CALLERS * PER_CALLER
  const noTurns = samples[0]!
  const rows = budgets.map((budget, k) => ({
    budgetMs: budget === NO_TURNS ? null : budget,
    nsPerCall: median(samples[k]!) / calls,
    vsNoTurns: median(samples[k]!.map((ns, round) => noTurns[round]! / ns)),
  }))
  console.log('| loop-turn budget | ns a call | calls a second against no turns |')
  console.log('| --- | ---: | ---: |')
  for (const row of rows) {
    const budget = row.budgetMs === null ? 'none (the loop never turns)' : `${row.budgetMs} ms`
    console.log(`| ${budget} | ${row.nsPerCall.toFixed(1)} | ${row.vsNoTurns.toFixed(3)} |`)
  }
  console.log(JSON.stringify(rows))
} finally {
  workers.dispose()
}
