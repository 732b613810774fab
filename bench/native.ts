/**
 * `tsx bench/native.ts [--quick]`: the OCR direction example served on Node
 * on onnxruntime-node against onnxruntime-web, and the native row against
 * its own in-process limit, measured as the WASM one is (bench/model-limit.ts:
 * the best layout and batch size of decode + preprocess + run, its best cell
 * measured again after each round of the served rows). Two servers side by
 * side, one per runtime (EDGESERVE_ONNX_RUNTIME), their rows alternating at
 * c=64. Then the OCR recognizer and detector as shipped, in process, called
 * by 64 callers as the pipeline calls them (bench/stage-load.ts), a process
 * per runtime and round, the runtimes taking turns. Prints
 * one JSON line; the bench runner (bench/run.ts) stores it. Run alone it is
 * the quickest check of these rows: about four minutes with --quick.
 */
import { pathToFileURL } from 'node:url'
import { ENDPOINTS as E, loadSpec, prime } from './endpoints.js'
import { interleavedRows, type LoadRow } from './http.js'
import { layoutName } from './layout.js'
import { TSX, median, quick, roundByRound, runJsonChild, startChild } from './lib.js'
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
  /** The recognizer and the detector in process, a row per model and runtime (`setting` says which); absent in results older than these rows. */
  stages?: StageRow[]
  ratios: {
    ocr_native_vs_wasm_served_c64: number
    ocr_native_served_vs_pipeline_limit_c64: number
    ocr_recognizer_native_vs_wasm_c64: number
    ocr_detector_native_vs_wasm_c64: number
  }
  ratioNotes: Record<string, string>
}

const STAGE_ROUNDS = { durationS: quick ? 3 : 8, rounds: quick ? 3 : 5 }

/** A stage's row as bench/adaptive-stages.ts prints it. */
export interface StageRow {
  model: string
  setting: string
  requestsPerS: number
  p99Ms: number
  roundsRequestsPerS: number[]
}

/**
 * The recognizer and detector as shipped on each runtime, in process
 * (bench/adaptive-stages.ts --shipped-only): a process per runtime and
 * round, the runtimes taking turns. Not both in one process: there
 * onnxruntime-web's recognizer ran about a fifth slower beside loaded
 * onnxruntime-node sessions than alone.
 */
async function measureStages() {
  const rounds: Record<string, StageRow[][]> = { 'onnxruntime-web': [], 'onnxruntime-node': [] }
  for (let round = 0; round < STAGE_ROUNDS.rounds; round++) {
    for (const [runtime, env] of [
      ['onnxruntime-web', WEB],
      ['onnxruntime-node', NATIVE],
    ] as const) {
      const args = ['--print-only', '--shipped-only', '--rounds', '1', '--duration', String(STAGE_ROUNDS.durationS)]
      const { rows } = await runJsonChild<{ rows: StageRow[] }>('bench/adaptive-stages.ts', args, env)
      rounds[runtime]!.push(rows)
      log(`round ${round + 1} on ${runtime}: ${rows.map((r) => `${r.model} ${r.requestsPerS.toFixed(1)}`).join(', ')} items/s`)
    }
  }
  const rowOf = (runtime: string, model: string): StageRow => {
    const perRound = rounds[runtime]!.map((rows) => rows.find((r) => r.model === model)!)
    const values = perRound.map((r) => r.requestsPerS)
    const mid = perRound.find((r) => r.requestsPerS === median(values)) ?? perRound[0]!
    return { model, setting: runtime, requestsPerS: median(values), p99Ms: mid.p99Ms, roundsRequestsPerS: values }
  }
  const rows = ['ocr-recognizer', 'ocr-detector'].flatMap((model) => [rowOf('onnxruntime-web', model), rowOf('onnxruntime-node', model)])
  const ratio = (model: string) => roundByRound(rowOf('onnxruntime-node', model).roundsRequestsPerS, rowOf('onnxruntime-web', model).roundsRequestsPerS)
  return { rows, recognizer: ratio('ocr-recognizer'), detector: ratio('ocr-detector') }
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
    const stages = await measureStages()
    const stageNote = (model: string) =>
      `the OCR ${model} as shipped on onnxruntime-node over onnxruntime-web, in process, 64 callers as the pipeline calls it (bench/stage-load.ts), ` +
      `a process per runtime and round, ${STAGE_ROUNDS.durationS} s rows alternating, the median of ${STAGE_ROUNDS.rounds} rounds' ratios`
    return {
      rows: [
        { ...web!, endpoint: E.ocrBatched.name, runtime: 'onnxruntime-web' },
        { ...native!, endpoint: E.ocrBatched.name, runtime: 'onnxruntime-node' },
      ],
      limit,
      stages: stages.rows,
      ratios: {
        ocr_native_vs_wasm_served_c64: roundByRound(native!.roundsRequestsPerS, web!.roundsRequestsPerS),
        ocr_native_served_vs_pipeline_limit_c64: native!.requestsPerS / limit.pipelineLimit.itemsPerS,
        ocr_recognizer_native_vs_wasm_c64: stages.recognizer,
        ocr_detector_native_vs_wasm_c64: stages.detector,
      },
      ratioNotes: {
        ocr_native_vs_wasm_served_c64:
          'the OCR direction example as shipped, served on onnxruntime-node over the same on onnxruntime-web, two servers side by side, c=64, ' +
          `the median of ${ROUNDS.count} alternating rounds' ratios (decode, preprocessing and HTTP do not speed up: about 1.9 is the most a 2.2x faster model gives here)`,
        ocr_native_served_vs_pipeline_limit_c64:
          'the native row over its own in-process limit, measured as the WASM one: best items/s of decode + preprocess + run over batch sizes and layouts, ' +
          `its best cell measured again after each served round (batch ${best.batch}, ${layoutName(best)}, ${limit.pipelineLimit.itemsPerS.toFixed(0)} items/s)`,
        ocr_recognizer_native_vs_wasm_c64: stageNote('recognizer'),
        ocr_detector_native_vs_wasm_c64: stageNote('detector'),
      },
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    await beside.stop()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify(await measureNative()))
