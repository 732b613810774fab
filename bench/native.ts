/**
 * `tsx bench/native.ts [--quick]`: the OCR direction example served on Node
 * on onnxruntime-node against onnxruntime-web, and the native row against
 * its own in-process limit, measured as the WASM one is (bench/model-limit.ts:
 * the best layout and batch size of decode + preprocess + run, its best cell
 * measured again after each round of the served rows). Two servers side by
 * side, one per runtime (EDGESERVE_ONNX_RUNTIME), their rows alternating at
 * c=64. Prints one JSON line; the bench runner (bench/run.ts) stores it. Run
 * alone it is the quickest check of these rows: about three minutes with
 * --quick.
 */
import { pathToFileURL } from 'node:url'
import { ENDPOINTS as E, loadSpec, prime } from './endpoints.js'
import { interleavedRows, type LoadRow } from './http.js'
import { layoutName } from './layout.js'
import { TSX, median, quick, roundByRound, startChild } from './lib.js'
import { limitBeside, measureModelLimit, type ModelLimit } from './model-limit.js'

const NATIVE = { EDGESERVE_ONNX_RUNTIME: 'onnxruntime-node' }
const WEB = { EDGESERVE_ONNX_RUNTIME: 'onnxruntime-web' }
/** As the runner's ratio rows: five rounds, each row 2 s (quick) or 6 s. */
const ROUNDS = { count: 5, rowS: quick ? 2 : 6 }
const log = (message: string) => console.error(`[bench native] ${message}`)

export interface NativeRun {
  /** The direction classifier served on each runtime, c=64 (`runtime` says which). */
  rows: (LoadRow & { endpoint: string; runtime: string })[]
  /** onnxruntime-node's in-process limit, its best cell's windows beside the served rows in `pipelineLimitBesideServedRows`. */
  limit: ModelLimit
  ratios: { ocr_native_vs_wasm_served_c64: number; ocr_native_served_vs_pipeline_limit_c64: number }
  ratioNotes: Record<string, string>
}

export async function measureNative(): Promise<NativeRun> {
  log('onnxruntime-node: the model and pipeline limits')
  const limit = await measureModelLimit({ quick, env: NATIVE })
  const beside = limitBeside(limit.pipelineLimit, { quick, env: NATIVE })
  const windows: number[] = []
  const servers = await Promise.all([WEB, NATIVE].map((env) => startChild([process.execPath, TSX, 'bench/server.ts'], /READY (http:\/\/\S+)/, env, 90_000)))
  try {
    const specs = servers.map((server) => {
      const base = server.match[1]!
      return {
        base,
        spec: loadSpec(E.ocrBatched, base, {
          target: 'node',
          connections: 64,
          durationS: ROUNDS.rowS,
          warmupS: quick ? 0.5 : 3,
          serverGroup: server.child.pid!,
        }),
      }
    })
    for (const { base } of specs) await prime(base, E.ocrBatched)
    const [web, native] = await interleavedRows(
      specs.map((s) => s.spec),
      ROUNDS.count,
      async () => windows.push(await beside.measure()),
    )
    for (const [name, row] of [
      ['onnxruntime-web', web!],
      ['onnxruntime-node', native!],
    ] as const) {
      log(
        `${name} ${E.ocrBatched.name} c=64: ${row.requestsPerS.toFixed(0)} req/s, p50 ${row.p50Ms.toFixed(1)} ms, batch ${row.meanBatchSize?.toFixed(1) ?? '-'}`,
      )
    }
    log(`onnxruntime-node limit beside the served rows: ${windows.map((w) => w.toFixed(0)).join(', ')} items/s`)
    const best = limit.pipelineLimit
    limit.pipelineLimitBeforeServedRows = best.itemsPerS
    limit.pipelineLimit = { ...best, itemsPerS: median(windows) }
    limit.pipelineLimitBesideServedRows = windows
    return {
      rows: [
        { ...web!, endpoint: E.ocrBatched.name, runtime: 'onnxruntime-web' },
        { ...native!, endpoint: E.ocrBatched.name, runtime: 'onnxruntime-node' },
      ],
      limit,
      ratios: {
        ocr_native_vs_wasm_served_c64: roundByRound(native!.roundsRequestsPerS, web!.roundsRequestsPerS),
        ocr_native_served_vs_pipeline_limit_c64: native!.requestsPerS / limit.pipelineLimit.itemsPerS,
      },
      ratioNotes: {
        ocr_native_vs_wasm_served_c64:
          'the OCR direction example as shipped, served on onnxruntime-node over the same on onnxruntime-web, two servers side by side, c=64, ' +
          `the median of ${ROUNDS.count} alternating rounds' ratios (decode, preprocessing and HTTP do not speed up: about 1.9 is the most a 2.2x faster model gives here)`,
        ocr_native_served_vs_pipeline_limit_c64:
          'the native row over its own in-process limit, measured as the WASM one: best items/s of decode + preprocess + run over batch sizes and layouts, ' +
          `its best cell measured again after each served round (batch ${best.batch}, ${layoutName(best)}, ${limit.pipelineLimit.itemsPerS.toFixed(0)} items/s)`,
      },
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    await beside.stop()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify(await measureNative()))
