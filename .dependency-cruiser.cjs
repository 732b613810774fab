/**
 * The layers of src/, held by `npm run lint:layers` (dependency-cruiser).
 *
 * Lowest first; a file imports only its own layer or lower ones:
 *
 *   errors → batching → metrics → deployment, onnx → http → runtime/node, runtime/workers, client → index
 *
 * so the batching core runs without a deployment, a deployment without HTTP,
 * and HTTP without a runtime: each can be read, tested and changed with only
 * what lies below it in mind. wasm/ holds how each runtime finds and
 * instantiates onnxruntime-web's WebAssembly: only src/onnx loads it, and it
 * imports nothing from src/.
 *
 * Type-only imports count as imports here: a type from a higher layer ties
 * the lower one to it as surely as a value does.
 */

/** The layers, lowest first; folders on one line share a layer. */
const LAYERS = [
  { name: 'errors', paths: ['^src/errors[.]ts$'] },
  { name: 'batching', paths: ['^src/batching/'] },
  { name: 'metrics', paths: ['^src/metrics/'] },
  { name: 'deployment, onnx', paths: ['^src/deployment/', '^src/onnx/'] },
  { name: 'http', paths: ['^src/http/'] },
  { name: 'runtime/node, runtime/workers, client', paths: ['^src/runtime/node/', '^src/runtime/workers/', '^src/client/'] },
  { name: 'index', paths: ['^src/index[.]ts$'] },
]

/** One rule per layer: it may not import any layer above it. */
const upwardImports = LAYERS.slice(0, -1).map((layer, i) => {
  const higher = LAYERS.slice(i + 1)
  return {
    name: `no-import-above-${layer.name.split(',')[0].replace(/\W+/g, '-')}`,
    comment: `${layer.name} imports only its own layer or lower ones, not ${higher.map((h) => h.name).join(', ')}`,
    severity: 'error',
    from: { path: layer.paths },
    to: { path: higher.flatMap((h) => h.paths) },
  }
})

module.exports = {
  forbidden: [
    ...upwardImports,
    {
      name: 'src-file-in-a-layer',
      comment: 'every file under src/ belongs to one of the layers above: add a new folder to LAYERS in .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.flatMap((layer) => layer.paths) },
      to: {},
    },
    {
      name: 'wasm-imports-nothing-from-src',
      comment: 'wasm/ holds only what src/onnx loads: what it needs from src/ is passed in, or the code lives in src/onnx',
      severity: 'error',
      from: { path: '^wasm/' },
      to: { path: '^src/' },
    },
    {
      name: 'only-onnx-loads-wasm',
      comment: "wasm/ is onnxruntime-web's WebAssembly for each runtime: only src/onnx loads it",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/onnx/' },
      to: { path: '^wasm/' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles: a cycle makes the order in which modules start depend on which one is imported first',
      severity: 'error',
      from: { path: '^(src|wasm)/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import names a file or package that does not exist',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports (import type, and imports that TypeScript erases) are dependencies too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Workers' own modules, as node: ones are Node's.
    builtInModules: { add: ['cloudflare:workers'] },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // The repository's own condition, as in tsconfig.json's customConditions: package.json's `imports`
      // (the # specifiers) and `exports` resolve to the files in src/ they stand for, not to dist/.
      conditionNames: ['edgeserve-source', 'types', 'import', 'node', 'default'],
      extensions: ['.ts', '.d.ts', '.js', '.mjs'],
    },
  },
}
