/**
 * The keep-alive case, on Node (`edgeserve run`) and through `wrangler dev`:
 * one raw kept-alive connection carries pairs of (a request refused before
 * its body is read, a good request), and every good request is answered on
 * that connection. Clients pool connections (undici, browsers, load
 * balancers), so a connection dropped after an early answer loses a real
 * user's next request. Nothing here retries or reconnects.
 */
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RawConnection } from '../support/raw-connection.js'
import { REJECTIONS, SIZES, WRONG_RPC_TOKEN, randomSize, sendPairs, type Rejection } from './lib/keep-alive.js'
import { errorTypeIn } from './lib/http.js'
import { Prng } from './lib/prng.js'
import { Recorder } from './lib/record.js'
import { startNode, startWranglerDev, type NodeServer, type WranglerDev } from './lib/servers.js'

/** Replay with RELIABILITY_SEED=<seed>. */
const SEED = Number(process.env.RELIABILITY_SEED ?? 20_240_187)
const PAIRS = 1_000
/** The bound on 1,000 pairs (about 75 MB of bodies over loopback; about 5 s on Node, 15 s through wrangler dev here). */
const PAIRS_DEADLINE_MS = 60_000

const nodeRecorder = new Recorder('7-keep-alive-node', 'Keep-alive on Node: early refusals and good requests on one connection')
const workersRecorder = new Recorder('7-keep-alive-workers', 'Keep-alive through wrangler dev: early refusals and good requests on one connection')

/** Every refusal kind with every size of SIZES it takes, in turn. */
const sweep = (rejections: readonly Rejection[]) =>
  SIZES.flatMap((size) =>
    rejections.filter((rejection) => size >= (rejection.minBytes ?? 0) && size <= (rejection.maxBytes ?? Infinity)).map((rejection) => ({ rejection, size })),
  )

/** A 415 for a text upload the OCR deployment refuses before reading it. */
const ocrUpload = (size: number) => `POST /ocr/direction HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${size}\r\n\r\n`

function describeKeepAlive(runtime: string, base: () => string, recorder: Recorder, rejections: readonly Rejection[]) {
  it(`every early refusal (${rejections.map((r) => r.status).join(', ')}) of a 0 B to 1 MiB body keeps the connection, and the good request after it is answered`, async () => {
    const pairs = sweep(rejections)
    const outcome = await sendPairs(base(), pairs.length, (i) => pairs[i]!, { recorder, deadlineMs: PAIRS_DEADLINE_MS })
    recorder.fact('sweep', { kinds: rejections.map((r) => `${r.status} ${r.name}`), sizes: SIZES, ...outcome })
    expect(outcome.failures).toEqual([])
    expect(outcome.goodAnswered).toBe(pairs.length)
  })

  it(`${PAIRS.toLocaleString('en')} pairs over one connection, bodies of 0 B to 1 MiB: every good request is answered`, async () => {
    const prng = new Prng(SEED)
    // Without the refusal that waits 100 ms for a batch: the sweep above has it, and here it would only add time.
    const quick = rejections.filter((r) => !r.waitsForABatch)
    const plan = Array.from({ length: PAIRS }, () => {
      const rejection = prng.pick(quick)
      return { rejection, size: Math.max(rejection.minBytes ?? 0, randomSize(prng)) }
    })
    const outcome = await sendPairs(base(), PAIRS, (i) => plan[i]!, { recorder, deadlineMs: PAIRS_DEADLINE_MS })
    recorder.fact('thousandPairs', { seed: SEED, ...outcome })
    expect(outcome.failures).toEqual([])
    expect(outcome.goodAnswered).toBe(PAIRS)
    expect(recorder.leaks).toEqual([])
  })
}

describe('keep-alive on Node', () => {
  let server: NodeServer
  beforeAll(async () => {
    server = await startNode(['examples/demo/app.ts', '--rpc-token', 'keep-alive-suite-token'])
  })
  afterAll(async () => {
    await server?.stop()
    nodeRecorder.save()
  })

  describeKeepAlive('Node', () => server.url, nodeRecorder, [...REJECTIONS, WRONG_RPC_TOKEN])

  it('a body past 1 MiB is refused with Connection: close; the whole upload is taken, the answer arrives whole, the connection ends with FIN', async () => {
    const ends: string[] = []
    for (const size of [1024 * 1024 + 1, 20 * 1024 * 1024]) {
      const connection = await RawConnection.open(server.url)
      const sending = connection.send(ocrUpload(size), size)
      const refused = await connection.next()
      nodeRecorder.answer({ status: refused.status, headers: refused.headers, body: Buffer.from(refused.body), text: refused.body, ms: 0 })
      expect([refused.status, refused.headers.connection, errorTypeIn(refused.body)], `${size} B`).toEqual([415, 'close', 'HTTPError'])
      // No reset while the client writes: a client that reads only after writing still gets its answer.
      await sending
      ends.push(`${size} B: ${await connection.ended()}`)
    }
    nodeRecorder.fact('pastTheDrainLimit', ends)
    expect(ends).toEqual([`${1024 * 1024 + 1} B: fin`, `${20 * 1024 * 1024} B: fin`])
  })
})

describe('keep-alive through wrangler dev', () => {
  let dev: WranglerDev
  beforeAll(async () => {
    dev = await startWranglerDev()
  }, 90_000)
  afterAll(async () => {
    await dev?.stop()
    workersRecorder.save()
  })

  describeKeepAlive('wrangler dev', () => dev.url, workersRecorder, REJECTIONS)

  it('a 20 MB body refused early: workerd cannot announce Connection: close, so the Worker reads it and the connection stays usable', async () => {
    const connection = await RawConnection.open(dev.url)
    const size = 20 * 1024 * 1024
    const sending = connection.send(ocrUpload(size), size)
    const refused = await connection.next(30_000)
    await sending
    workersRecorder.answer({ status: refused.status, headers: refused.headers, body: Buffer.from(refused.body), text: refused.body, ms: 0 })
    expect([refused.status, errorTypeIn(refused.body)]).toEqual([415, 'HTTPError'])
    await connection.write('GET /adder?number=41 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    expect((await connection.next()).body).toBe('42')
    connection.close()
    workersRecorder.fact('twentyMegabytesThenAGoodRequest', 'answered')
  })

  it('no early answer makes workerd log an error (a body forwarded to a Durable Object that answered without reading it)', () => {
    // workerd logs "✘ [ERROR] Uncaught Error: Network connection lost." when its pump of a body into an object breaks.
    const lines = stripVTControlCharacters(dev.output()).split('\n')
    expect(lines.filter((line) => /\[ERROR\]|Uncaught|Network connection lost/.test(line))).toEqual([])
  })
})
