/**
 * The model examples served on Node: answers equal a direct session.run.
 * onnxruntime-node is installed here (a devDependency), so 'auto' runs them
 * on it; models-web.test.ts serves the same on onnxruntime-web.
 */
import { describeServedModels } from '../support/served-models.js'

describeServedModels('Node', { runtime: 'onnxruntime-node', provider: 'cpu', forced: false })
