/**
 * A browser page built by Vite from a project that installed the tarball:
 * `edgeserve/onnx` takes its `browser` branch (the full onnxruntime-web,
 * WebGPU included) and `edgeserve` its browser stand-in for
 * AsyncLocalStorage, so the bundle holds nothing of Node's.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject, mustRun, pinnedVersion, type Project } from './lib/consumer.js'

/** A pinned Vite release, so that the bundle checked is the same from run to run. */
const VITE = 'vite@7.3.8'

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>edgeserve/onnx</title>
<script type="module" src="./main.js"></script>
`

const MAIN = `import { batch } from 'edgeserve'
import { loadModel, stack } from 'edgeserve/onnx'

let model
const score = batch(async (rows) => {
  model ??= loadModel(new URL('./model.onnx', location.href))
  const loaded = await model
  const output = await loaded.run({ [loaded.inputNames[0]]: stack(rows, [rows[0].length]) })
  const values = output[loaded.outputNames[0]].data
  return rows.map((_, i) => values[i])
}, { maxBatchSize: 16 })

document.title = String(await score([1, 2, 3, 4, 5, 6, 7, 8]))
`

let project: Project

beforeAll(async () => {
  project = await createProject('vite', ['hono', pinnedVersion('onnxruntime-web'), VITE], { 'index.html': PAGE, 'main.js': MAIN })
})

describe('a browser page built by Vite', () => {
  it('builds, with onnxruntime-web’s WebAssembly beside the bundle and nothing of Node in it', async () => {
    await mustRun(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'], project.dir, 180_000)
    const assets = readdirSync(join(project.dir, 'dist/assets'))
    const scripts = assets.filter((name) => name.endsWith('.js'))
    expect(scripts.length).toBeGreaterThan(0)
    // ORT fetches its .wasm next to the bundle: Vite must have emitted it.
    expect(assets.some((name) => name.endsWith('.wasm'))).toBe(true)
    const code = scripts.map((name) => readFileSync(join(project.dir, 'dist/assets', name), 'utf8')).join('\n')
    // Vite swaps a Node built-in for an empty '__vite-browser-external' module: there must be none.
    expect(code).not.toMatch(/async_hooks|__vite-browser-external/)
    // The page's own batch queue made it in (its option validation says maxBatchSize).
    expect(code).toContain('maxBatchSize')
  })
})
