/**
 * Decode + preprocess of the bench's image (the OCR route's work per
 * request, before batching) on each runtime: in the Node server and in the
 * Worker through the bench app's `/prepare` route, and in headless Chromium
 * through a page. The model-limit processes time it too, on Node, between
 * model runs (`decodePreprocessMsPerItem`).
 *
 *   NODE_OPTIONS=--conditions=edgeserve-source npx tsx bench/prepare.ts [--chromium]
 *
 * prints the three rows (starting the bench's Node server and its Worker
 * under wrangler dev, as `npm run bench` does), or the Chromium row alone.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT, TSX, WRANGLER_DEV, WRANGLER_READY, median, startChild } from './lib.js'
import { BENCH_IMAGE } from './model-limit.js'
import { bundlePage, launchChromium, serveFiles } from '../test/support/browser-page.js'
import { requireChromium } from '../test/support/chromium.js'

export interface PrepareRow {
  runtime: string
  /** Median over the rounds. */
  msPerImage: number
  rounds: number[]
  how: string
}

const image = () => new Uint8Array(readFileSync(join(ROOT, BENCH_IMAGE)))

/** Images per timed request: some 50 ms of work, against a request's own cost of a fraction of a millisecond. */
const PER_REQUEST = 500

/**
 * ms per image through `${base}/prepare`: each round times a request that
 * does the work PER_REQUEST times and one that does it 0 times, back to
 * back, and counts the difference, so HTTP's own cost drops out. The
 * clock is the client's: a Worker's moves in whole milliseconds locally, and
 * stands still while it runs once deployed.
 */
export async function prepareOverHttp(runtime: string, base: string, rounds: number): Promise<PrepareRow> {
  const body = image()
  const timed = async (n: number): Promise<number> => {
    const t0 = performance.now()
    const response = await fetch(`${base}/prepare?n=${n}`, { method: 'POST', body, headers: { 'content-type': 'image/png' } })
    if (!response.ok) throw new Error(`${runtime} /prepare?n=${n}: ${response.status} ${await response.text()}`)
    await response.arrayBuffer()
    return performance.now() - t0
  }
  for (let i = 0; i < 3; i++) await timed(PER_REQUEST) // tier-up
  const perImage: number[] = []
  for (let r = 0; r < rounds; r++) {
    const empty = await timed(0)
    perImage.push(((await timed(PER_REQUEST)) - empty) / PER_REQUEST)
  }
  return {
    runtime,
    msPerImage: median(perImage),
    rounds: perImage,
    how: `the server's /prepare route, ${PER_REQUEST} images a request less an empty request, timed by the client`,
  }
}

/** ms per image in headless Chromium, timed by the page in 200 ms windows. */
export async function prepareInChromium(rounds: number): Promise<PrepareRow> {
  requireChromium()
  const dir = await mkdtemp(join(tmpdir(), 'edgeserve-prepare-'))
  const bundle = join(dir, 'main.js')
  const html = join(dir, 'index.html')
  try {
    await bundlePage(join(ROOT, 'bench/prepare-page/main.ts'), bundle)
    await writeFile(html, '<!doctype html><script type="module" src="./main.js"></script>')
    const files = await serveFiles(
      new Map([
        ['/app/', html],
        ['/app/main.js', bundle],
        ['/app/image.png', join(ROOT, BENCH_IMAGE)],
      ]),
    )
    const browser = await launchChromium(dir, [])
    try {
      const page = await browser.newPage()
      await page.goto(`${files.base}/app/`)
      await page.waitForFunction(() => 'measurePrepare' in globalThis)
      const windows = await page.evaluate(
        (n) => (globalThis as unknown as { measurePrepare: (windows: number) => Promise<number[]> }).measurePrepare(n),
        rounds,
      )
      return { runtime: 'chromium', msPerImage: median(windows), rounds: windows, how: 'a page in headless Chromium, 200 ms windows timed by the page' }
    } finally {
      await browser.close()
      await files.close()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The rows over HTTP from a server started with `argv`, which prints its address matching `ready`; the server stops after. */
async function prepareOnServer(runtime: string, argv: string[], ready: RegExp, rounds: number): Promise<PrepareRow> {
  const server = await startChild(argv, ready, {}, 90_000)
  try {
    return await prepareOverHttp(runtime, server.match[1]!, rounds)
  } finally {
    await server.stop()
  }
}

/** The three rows, one runtime at a time, as `npm run bench` measures them (its server idle), each printed as it comes. */
async function prepareEverywhere(rounds: number, report: (row: PrepareRow) => void): Promise<void> {
  report(await prepareOnServer('node', [process.execPath, TSX, 'bench/server.ts'], /READY (http:\/\/\S+)/, rounds))
  report(await prepareOnServer('workerd', WRANGLER_DEV, WRANGLER_READY, rounds))
  report(await prepareInChromium(rounds))
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = (row: PrepareRow): void => console.log(JSON.stringify(row))
  if (process.argv.includes('--chromium')) report(await prepareInChromium(9))
  else await prepareEverywhere(9, report)
}
