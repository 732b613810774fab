/**
 * Where a served request's time goes, thread by thread: the bench server
 * (bench/server.ts) runs under `node --cpu-prof`, one endpoint is loaded
 * from this process as a bench row is, and each of the server's threads'
 * samples over the measured seconds are grouped by what ran: the model's
 * WebAssembly, decoding and preprocessing, onnxruntime-web's JavaScript,
 * edgeserve's files, Hono and its Node adapter, Node's own modules, the
 * collector, idle. Prints a table per busy thread, in milliseconds of the
 * thread per request served. Not part of `npm run bench`.
 *
 *   npx tsx bench/server-profile.ts [--endpoint ocr-batched] [--connections 64] [--seconds 6] [--threads [Deployment,...]] [--functions N]
 *
 * `--functions N` adds, per thread, the N functions that ran longest
 * themselves (self time), where the groups are too coarse to act on.
 *
 * `--threads` serves the OCR deployment on a worker-thread replica, as the
 * bench's thread rows do, or the deployments it names (`--endpoint
 * mlp-batched --threads HousePricePredictor`). The load generator runs here,
 * on the same cores.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadSpec, prime, servedEndpointArgs } from './endpoints.js'
import { measure, warmUp } from './http.js'
import { argValue, startChild } from './lib.js'

const { endpoint, connections, seconds, threads, threadDeployments } = servedEndpointArgs({ endpoint: 'ocr-batched', seconds: 6 })
const topFunctions = Number(argValue('--functions') ?? 0)

/** A node of a V8 CPU profile, as `--cpu-prof` writes it. */
interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

/** The file a URL names, from its last two path segments: `batching/queue.ts`. */
const shortFile = (url: string) => url.split('/').slice(-2).join('/')

const DECODE_OR_PREPROCESS = /examples\/.*(preprocess|image)\.ts$|examples\/shared\/(png|jpeg|pixels)\.ts$/

/**
 * What a sample ran, from its stack: the model's WebAssembly anywhere on it
 * wins, then an example's decoding or preprocessing (with the libraries it
 * calls, such as the PNG decoder's inflate), then the nearest frame (leaf
 * first) of code this repository or a library owns, then the leaf's Node
 * module.
 */
function groupOf(stack: ProfileNode['callFrame'][]): string {
  const leaf = stack[0]!
  if (['(idle)', '(garbage collector)', '(program)'].includes(leaf.functionName)) return leaf.functionName
  if (stack.some((frame) => frame.functionName.startsWith('wasm-function') || frame.url.startsWith('wasm://'))) return 'model (WebAssembly)'
  if (stack.some((frame) => DECODE_OR_PREPROCESS.test(frame.url))) return 'decode + preprocess'
  for (const { url } of stack) {
    if (/onnxruntime-web/.test(url)) return 'onnxruntime-web JavaScript'
    if (/\/src\//.test(url)) return `edgeserve ${shortFile(url)}`
    if (/\/(examples|bench)\//.test(url)) return `app ${shortFile(url)}`
    const library = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1]
    if (library && library !== 'tsx') return library
  }
  return `node ${leaf.url.startsWith('node:') ? leaf.url : shortFile(leaf.url) || leaf.functionName}`
}

/**
 * Milliseconds of the samples between `from` and `to` (the profile's
 * microsecond clock), summed by the key `keyOf` gives each sample's node.
 */
function timesBy(profile: Profile, from: number, to: number, keyOf: (id: number) => string): Map<string, number> {
  const times = new Map<string, number>()
  let time = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i]!
    // A sample stands for the time until the next one.
    const span = (profile.timeDeltas[i + 1] ?? 0) / 1000
    if (time < from || time > to) continue
    const key = keyOf(profile.samples[i]!)
    times.set(key, (times.get(key) ?? 0) + span)
  }
  return times
}

/** Milliseconds of each group (see groupOf) between `from` and `to`. */
function groupTimes(profile: Profile, from: number, to: number): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parentOf = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
  return timesBy(profile, from, to, (leaf) => {
    const stack: ProfileNode['callFrame'][] = []
    for (let id: number | undefined = leaf; id !== undefined; id = parentOf.get(id)) stack.push(byId.get(id)!.callFrame)
    return groupOf(stack)
  })
}

/** Milliseconds each function ran itself (the sample's leaf) between `from` and `to`, by name and place. */
function selfTimes(profile: Profile, from: number, to: number): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  return timesBy(profile, from, to, (leaf) => {
    const { functionName, url } = byId.get(leaf)!.callFrame
    return `${functionName || '(anonymous)'} ${url ? shortFile(url) : ''}`.trim()
  })
}

/**
 * Which of the server's threads a profile is. `--cpu-prof` names each file
 * `CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile`, and thread 0
 * is the main one; a worker is a replica's if it ran edgeserve's code, and
 * ORT's if it ran only WebAssembly.
 */
function threadOf(file: string, profile: Profile): string {
  if (file.split('.')[4] === '0') return 'server thread'
  const urls = profile.nodes.map((node) => node.callFrame.url)
  if (urls.some((url) => /\/src\//.test(url))) return 'replica thread'
  if (urls.some((url) => url.startsWith('wasm://'))) {
    // A thread waiting inside WebAssembly (ORT's workers wait on a futex there) is sampled as running it.
    return "ORT's worker thread (its waits inside WebAssembly count as WebAssembly)"
  }
  return 'other thread'
}

const dir = mkdtempSync(join(tmpdir(), 'server-profile-'))
try {
  const server = await startChild(
    [process.execPath, '--conditions=edgeserve-source', '--import', 'tsx', '--cpu-prof', `--cpu-prof-dir=${dir}`, 'bench/server.ts', ...(threads ? ['--threads'] : [])],
    /READY (http:\/\/\S+)/,
    threadDeployments === undefined ? {} : { BENCH_THREAD_DEPLOYMENTS: threadDeployments },
    90_000,
  )
  const base = server.match[1]!
  let row
  let measuredAt: number
  try {
    await prime(base, endpoint)
    const spec = loadSpec(endpoint, base, { target: threads ? 'node-threads' : 'node', connections, durationS: seconds, warmupS: 2 })
    await warmUp(spec)
    row = await measure(spec)
    measuredAt = performance.now()
  } finally {
    // serve() drains and exits on SIGTERM, and --cpu-prof writes each thread's profile as it exits.
    await server.stop()
  }
  // The profiles end when the server exited: the measured seconds end `sinceMeasured` before that.
  const sinceMeasuredUs = (performance.now() - measuredAt) * 1000
  const requests = row.requestsPerS * seconds
  console.log(
    `${endpoint.name} at c=${connections}, ${threads ? `${threadDeployments ?? 'TextDirectionClassifier'} on a thread replica` : 'in process'}: ${row.requestsPerS.toFixed(0)} req/s` +
      (row.meanBatchSize === null ? '' : `, mean batch ${row.meanBatchSize.toFixed(1)}`) +
      (row.batchItemsPerS === null ? '' : `, batches ran ${row.batchItemsPerS.toFixed(0)} items/s`) +
      `; load generator ${row.loadGeneratorCores.toFixed(2)} cores (same machine)\n`,
  )
  const files = readdirSync(dir).filter((file) => file.endsWith('.cpuprofile'))
  if (files.length === 0) throw new Error('the server wrote no CPU profile')
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile
    // Profiles end within milliseconds of each other, as the process exits.
    const to = profile.endTime - sinceMeasuredUs
    const groups = groupTimes(profile, to - seconds * 1e6, to)
    const total = [...groups.values()].reduce((a, b) => a + b, 0)
    const busy = total - (groups.get('(idle)') ?? 0)
    if (busy < total * 0.05) continue
    console.log(`${threadOf(file, profile)}: busy ${((busy / total) * 100).toFixed(0)}% of ${(total / 1000).toFixed(1)} s, ${(busy / requests).toFixed(3)} ms per request\n`)
    console.log('| what ran | ms of the thread per request | share |')
    console.log('| --- | ---: | ---: |')
    for (const [group, ms] of [...groups].sort((a, b) => b[1] - a[1])) {
      if (ms / total < 0.003) continue
      console.log(`| ${group} | ${(ms / requests).toFixed(3)} | ${((ms / total) * 100).toFixed(1)}% |`)
    }
    console.log('')
    if (topFunctions > 0) {
      const functions = [...selfTimes(profile, to - seconds * 1e6, to)].sort((a, b) => b[1] - a[1]).slice(0, topFunctions)
      console.log('| function (self time) | µs of the thread per request | share |')
      console.log('| --- | ---: | ---: |')
      for (const [name, ms] of functions) console.log(`| ${name} | ${((ms / requests) * 1000).toFixed(2)} | ${((ms / total) * 100).toFixed(1)}% |`)
      console.log('')
    }
  }
} finally {
  if (process.env.KEEP_PROFILE) console.log(`profiles kept in ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
