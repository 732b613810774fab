/**
 * Two bench servers side by side, the same rows on each, alternating: how
 * the figures in bench/limits.md that compare two versions of the code (or
 * two settings) were taken. This machine's speed moves by up to two times
 * from minute to minute, so only rows measured in turn, seconds apart,
 * compare. Not part of `npm run bench`.
 *
 *   npx tsx bench/ab.ts [--endpoints mlpBatched,honoJson] [--rounds 5] [--first ocrBatched] A B
 *
 * A and B are each a checkout's directory, optionally followed by
 * environment settings for its server: `/tmp/before` or
 * `.:EDGESERVE_NUM_THREADS=1`. A checkout other than this one needs its
 * dependencies and generated pages:
 *
 *   git worktree add /tmp/before <rev> && ln -s "$PWD/node_modules" /tmp/before/ && (cd /tmp/before && npm run build:pages)
 *
 * `--first` serves one row of that endpoint on every server before the
 * measured ones (what an earlier bench row leaves in the process, such as
 * the OCR example's first requests). Endpoint names are the keys of
 * ENDPOINTS in ./endpoints.ts. Prints each row's req/s per round, and the
 * server's CPU per request (µs of its process group), with their medians.
 * The load generator runs in this process, on the same cores.
 */
import { resolve } from 'node:path'
import { ENDPOINTS, loadSpec, prime } from './endpoints.js'
import { measure, warmUp } from './http.js'
import { argValue, median, startChild } from './lib.js'

type Name = keyof typeof ENDPOINTS

function endpointNamed(name: string): Name {
  if (!(name in ENDPOINTS)) throw new Error(`no endpoint ${JSON.stringify(name)}; known: ${Object.keys(ENDPOINTS).join(', ')}`)
  return name as Name
}

const names = (argValue('--endpoints') ?? 'mlpBatched,honoJson').split(',').map(endpointNamed)
const rounds = Number(argValue('--rounds') ?? 5)
const first = argValue('--first')
const firstRow = first === undefined ? undefined : endpointNamed(first)
const valued = new Set(['--endpoints', '--rounds', '--first'])
const sides = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith('--') && !valued.has(all[i - 1] ?? ''))
if (sides.length !== 2) throw new Error('name two checkouts to compare: npx tsx bench/ab.ts [options] A B (see the comment at the top)')

/** A side's directory and its server's environment, from `dir[:NAME=value,...]`. */
function sideOf(arg: string): { dir: string; env: Record<string, string> } {
  const [dir, settings] = arg.split(/:(?=[A-Z_]+=)/)
  const env = Object.fromEntries((settings ?? '').split(',').filter(Boolean).map((pair) => pair.split('=', 2) as [string, string]))
  return { dir: resolve(dir!), env }
}

const servers = await Promise.all(
  sides.map(async (arg, i) => {
    const { dir, env } = sideOf(arg)
    // Each checkout's own source, as `npm run bench` serves it.
    const serverEnv = { NODE_OPTIONS: '--conditions=edgeserve-source', ...env }
    const child = await startChild([process.execPath, `${dir}/node_modules/tsx/dist/cli.mjs`, 'bench/server.ts'], /READY (http:\/\/\S+)/, serverEnv, 90_000, { cwd: dir })
    return { label: `${'AB'[i]} (${arg})`, base: child.match[1]!, child }
  }),
)
try {
  const spec = (server: (typeof servers)[number], name: Name) =>
    loadSpec(ENDPOINTS[name], server.base, { target: server.label, connections: 64, durationS: 3, warmupS: 0.5, serverGroup: server.child.child.pid! })
  for (const server of servers) {
    if (firstRow !== undefined) {
      await prime(server.base, ENDPOINTS[firstRow])
      await measure(spec(server, firstRow))
    }
    for (const name of names) {
      await prime(server.base, ENDPOINTS[name])
      await warmUp(spec(server, name))
    }
  }
  const rows = new Map<string, { rps: number[]; usPerRequest: number[] }>()
  for (let round = 0; round < rounds; round++) {
    for (const server of servers) {
      for (const name of names) {
        const row = await measure(spec(server, name))
        const key = `${server.label} ${name}`
        const into = rows.get(key) ?? { rps: [], usPerRequest: [] }
        into.rps.push(Math.round(row.requestsPerS))
        if (row.serverCores !== null) into.usPerRequest.push(Math.round((1e6 * row.serverCores) / row.requestsPerS))
        rows.set(key, into)
      }
    }
  }
  for (const [key, { rps, usPerRequest }] of rows) {
    console.log(`${key}: req/s ${rps.join(' ')} (median ${median(rps)}); server µs/request ${usPerRequest.join(' ')} (median ${median(usPerRequest)})`)
  }
} finally {
  await Promise.all(servers.map((server) => server.child.stop()))
}
