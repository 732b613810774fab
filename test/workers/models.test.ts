/** The model examples served by the demo Worker in workerd: answers equal a direct session.run. */
import { workerForTests } from '../support/workerd.js'
import { describeModelExamples } from '../support/model-suite.js'

const worker = workerForTests(new URL('../../wrangler.toml', import.meta.url))

describeModelExamples('workerd', () => worker.url)
