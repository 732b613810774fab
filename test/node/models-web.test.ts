/**
 * The model examples served on Node with onnxruntime-web, as for an app
 * without onnxruntime-node: the same suite as models.test.ts.
 */
import { describeServedModels } from '../support/served-models.js'

describeServedModels('Node with onnxruntime-web', { runtime: 'onnxruntime-web', provider: 'wasm', forced: true })
