/**
 * The preprocessing's WebAssembly in Node and browsers: compiled from the
 * bytes built beside it (1.1 KB, so synchronously, as a browser allows on
 * its main thread for a module this small).
 */
import { moduleFromBase64 } from '../../shared/wasm-module.js'
import { base64 } from './preprocess-bytes.js'

export default moduleFromBase64(base64)
