/**
 * Machine instructions per call in the engine bench's closed loop, counted
 * with callgrind: a figure that does not move with the machine's noise, for
 * finding where the engine's nanoseconds go (bench/limits.md). Not part of
 * `npm run bench`; it needs valgrind (`apt-get install valgrind`) and takes
 * about a minute and a half on two cores.
 *
 *   npx tsx bench/engine-instructions.ts [--size 64] [--by-function]
 *
 * `--by-function` also says which functions a call's instructions run in,
 * optimized JavaScript included (see ./callgrind-functions.ts): a profile
 * of the call in which nothing is sampled. It takes about twice as long.
 *
 * Each engine runs in a fresh `node --single-threaded` (no concurrent JIT
 * or GC threads to count) twice under callgrind: six warm-up runs, then
 * none or eight timed ones. The difference over eight runs' calls is what a
 * call costs once the code is optimized. Under callgrind the code runs some
 * fifty times slower, so the loop-turn budget (1 ms of batches before the
 * event loop turns) would end every few batches: it is lifted for the count,
 * and its clock reads are still counted.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bundleDriver } from './bundle-driver.js'
import { selfCostByFunction } from './callgrind-functions.js'
import { turnBudgetPlugin } from './turn-budget-plugin.js'
import { CALLERS, PER_CALLER } from './engine-workload.js'
import { argValue } from './lib.js'

const SIZE = Number(argValue('--size') ?? 64)
const BY_FUNCTION = process.argv.includes('--by-function')
const TIMED_RUNS = 8

// The engine bench's own workload (./engine-workload.ts): the engine named
// by ENGINE, its warm-up runs, then TIMED_RUNS more.
const driver = `
import { closedLoop, enginesAt } from './bench/engine-workload.ts'
const engine = enginesAt(${SIZE}).find((e) => e.name === process.env.ENGINE)
for (let run = 0; run < 6 + Number(process.env.TIMED_RUNS); run++) await closedLoop(engine.make())
`

const dir = mkdtempSync(join(tmpdir(), 'engine-instructions-'))
const bundle = join(dir, 'driver.mjs')
// The engine as shipped, with the loop-turn budget lifted (see above).
await bundleDriver(driver, 'engine-instructions-driver.mjs', bundle, [turnBudgetPlugin(1e9)])

type Count = { total: number; byFunction: Map<string, number> | undefined }

/** Instructions callgrind counted for one process, and with --by-function, each function's own. */
function count(engine: string, timedRuns: number): Promise<Count> {
  const valgrindFlags = ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'callgrind.out')}.%p`]
  const nodeFlags = ['--single-threaded']
  if (BY_FUNCTION) {
    valgrindFlags.push('--dump-instr=yes')
    nodeFlags.push('--perf-basic-prof')
  }
  return new Promise((resolve, reject) => {
    const child = spawn('valgrind', [...valgrindFlags, process.execPath, ...nodeFlags, bundle], {
      env: { ...process.env, ENGINE: engine, TIMED_RUNS: String(timedRuns) },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let err = ''
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.once('error', (error) => reject(new Error(`cannot run valgrind (apt-get install valgrind): ${error.message}`)))
    child.once('exit', (code) => {
      const collected = /Collected : ([\d,]+)/.exec(err)
      if (code !== 0 || !collected) return reject(new Error(`callgrind of ${engine} exited with ${code}:\n${err.slice(-2000)}`))
      const total = Number(collected[1]!.replaceAll(',', ''))
      if (!BY_FUNCTION) return resolve({ total, byFunction: undefined })
      // Valgrind runs node in its own process: the profile and V8's code map carry the same pid.
      const codeMap = `/tmp/perf-${child.pid}.map`
      try {
        resolve({ total, byFunction: selfCostByFunction(join(dir, `callgrind.out.${child.pid}`), codeMap) })
      } catch (error) {
        reject(error)
      } finally {
        rmSync(codeMap, { force: true })
      }
    })
  })
}

/** What each function adds a call: the difference between the two processes, over the timed calls. */
function perCallByFunction(warmUpOnly: Count, withTimed: Count, calls: number): [string, number][] {
  const names = new Set([...warmUpOnly.byFunction!.keys(), ...withTimed.byFunction!.keys()])
  return [...names]
    .map((name): [string, number] => [name, ((withTimed.byFunction!.get(name) ?? 0) - (warmUpOnly.byFunction!.get(name) ?? 0)) / calls])
    .filter(([, perCall]) => perCall >= 1)
    .sort((a, b) => b[1] - a[1])
}

const rows = []
try {
  for (const engine of ['edgeserve batch()', 'DataLoader', 'minimal batcher (reference)']) {
    const [warmUpOnly, withTimed] = await Promise.all([count(engine, 0), count(engine, TIMED_RUNS)])
    const calls = TIMED_RUNS * CALLERS * PER_CALLER
    const perCall = (withTimed.total - warmUpOnly.total) / calls
    const functions = BY_FUNCTION ? perCallByFunction(warmUpOnly, withTimed, calls) : undefined
    rows.push({
      engine,
      maxBatchSize: SIZE,
      instructionsPerCall: Math.round(perCall),
      ...(functions && { byFunction: Object.fromEntries(functions.map(([name, n]) => [name, Math.round(n)])) }),
    })
    console.error(`${engine}: ${Math.round(perCall)} instructions a call`)
    for (const [name, n] of functions ?? []) console.error(`  ${String(Math.round(n)).padStart(5)}  ${name}`)
  }
} finally {
  // The bundle and callgrind's profiles, some megabytes each: gone whether or not a count failed.
  rmSync(dir, { recursive: true, force: true })
}
console.log(JSON.stringify(rows))
