/**
 * `adaptive_follows_change`: a batched route whose cost changes while it is
 * served, over HTTP on Node. Its handler busy-waits `2 + 0.05·n` ms for a
 * batch of n (a fixed overhead: 64 serves the most), and, once the load has
 * run 2 s, `0.2·n + 0.01·n²` ms (superlinear: 1 or 2 serves the most). 64
 * closed-loop clients call it throughout. The ratio is the adaptive server's
 * answers per second from 2 s to 4 s after the switch over the best fixed
 * `maxBatchSize`'s in the same window.
 *
 *   npx tsx --conditions=edgeserve-source bench/adaptive-follows.ts
 *
 * Each setting runs in a server of its own (a child process, started again
 * for each setting so that no setting inherits another's warm state); the
 * clients run in this process, on the same machine's cores (on a 2-core
 * machine they take a good share of the server's CPU, which narrows the gaps
 * between sizes). Prints one JSON line: a row per setting, the ratio and its
 * note; `npm run bench` puts them in its results (full runs only: it takes
 * about three minutes).
 */
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { batch } from '../src/index.js'
import { argValue, median, roundByRound, startChild, TSX } from './lib.js'

const CLIENTS = 64
const WARM_MS = 2000
const FROM_MS = 2000
const TO_MS = 4000
/** The fixed sizes the adaptive server is compared with: those around both curves' best, and the ends. */
const FIXED = [1, 2, 3, 4, 8, 16, 64]
/**
 * Rounds, each setting once a round, the ratio taken round by round as the
 * other adaptive rows are: a single pass read 0.78 in one full run and 0.92
 * in the next quick one, as much as the fixed sizes around the best (1 to 3)
 * differ from one another.
 */
const ROUNDS = 3

const before = (n: number) => 2 + 0.05 * n
const after = (n: number) => 0.2 * n + 0.01 * n * n

function spin(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // busy: the batch's cost
  }
}

const setting = argValue('--serve')
if (setting !== undefined) {
  // The server: GET /item answers from a batch; POST /switch changes the cost.
  let cost = before
  const adaptive = setting === 'adaptive'
  const item = batch(
    async (xs: number[]) => {
      spin(cost(xs.length))
      return xs
    },
    { maxBatchSize: adaptive ? 64 : Number(setting), adaptive },
  )
  const app = new Hono()
  app.get('/item', async (c) => c.text(String(await item(1))))
  app.post('/switch', (c) => {
    cost = after
    return c.text('switched')
  })
  app.get('/limit', (c) => c.text(String(item.stats().batchSizeLimit)))
  serve({ fetch: app.fetch, port: 0 }, (info) => console.log(`READY http://127.0.0.1:${info.port}`))
} else {
  /** One setting's answers/s in the window in one round, and the limit it ended that round with. */
  async function measure(name: string): Promise<{ answersPerS: number; limitAfter: number }> {
    // The server runs edgeserve from src/, as this process does.
    const server = await startChild([process.execPath, TSX, 'bench/adaptive-follows.ts', '--serve', name], /READY (http:\/\/\S+)/, {
      NODE_OPTIONS: [process.env.NODE_OPTIONS, '--conditions=edgeserve-source'].filter(Boolean).join(' '),
    })
    const base = server.match[1]!
    try {
      let switchedAt = Infinity
      let stop = false
      const answered: number[] = []
      const start = performance.now()
      const clients = Array.from({ length: CLIENTS }, async () => {
        while (!stop) {
          const response = await fetch(`${base}/item`)
          await response.text()
          const now = performance.now()
          answered.push(now)
          if (now - switchedAt >= TO_MS) stop = true
        }
      })
      await new Promise((resolve) => setTimeout(resolve, WARM_MS - (performance.now() - start)))
      await (await fetch(`${base}/switch`, { method: 'POST' })).text()
      switchedAt = performance.now()
      await Promise.all(clients)
      const limitAfter = Number(await (await fetch(`${base}/limit`)).text())
      const counted = answered.filter((at) => at - switchedAt >= FROM_MS && at - switchedAt < TO_MS).length
      return { answersPerS: counted / ((TO_MS - FROM_MS) / 1000), limitAfter }
    } finally {
      await server.stop()
    }
  }

  const settings = ['adaptive', ...FIXED.map(String)]
  const rows = settings.map((setting) => ({ setting, roundsAnswersPerS: [] as number[], limitsAfter: [] as number[], answersPerS: 0 }))
  for (let round = 0; round < ROUNDS; round++) {
    for (const row of rows) {
      const { answersPerS, limitAfter } = await measure(row.setting)
      row.roundsAnswersPerS.push(answersPerS)
      row.limitsAfter.push(limitAfter)
      console.error(
        `round ${round + 1}, ${row.setting}: ${answersPerS.toFixed(0)} answers/s from ${FROM_MS / 1000} s to ${TO_MS / 1000} s after the switch, limit ${limitAfter}`,
      )
    }
  }
  for (const row of rows) row.answersPerS = median(row.roundsAnswersPerS)
  const adaptive = rows.find((r) => r.setting === 'adaptive')!
  const best = rows.filter((r) => r.setting !== 'adaptive').reduce((a, b) => (b.answersPerS > a.answersPerS ? b : a))
  const out = {
    rows,
    ratios: { adaptive_follows_change: roundByRound(adaptive.roundsAnswersPerS, best.roundsAnswersPerS) },
    ratioNotes: {
      adaptive_follows_change:
        `answers/s of a batched GET route served adaptively (maxBatchSize 64) from ${FROM_MS / 1000} s to ${TO_MS / 1000} s after its cost switched from 2 + 0.05·n to 0.2·n + 0.01·n² ms, ` +
        `over the best fixed maxBatchSize (${FIXED.join(', ')}; fixed ${best.setting} here, by its median) round by round, median of ${ROUNDS} rounds, ` +
        `${CLIENTS} closed-loop clients on the same machine, each setting in a server of its own`,
    },
  }
  console.log(JSON.stringify(out))
}
