/**
 * The preprocessing's WebAssembly in Node and browsers: compiled from the
 * bytes built beside it (1.1 KB, so synchronously, as a browser allows on
 * its main thread for a module this small).
 */
import { base64 } from './preprocess-bytes.js'

const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0))

export default new WebAssembly.Module(bytes)
