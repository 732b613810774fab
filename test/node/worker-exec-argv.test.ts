import { once } from 'node:events'
import type { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { startWorker } from '../../src/runtime/node/threads/exec-argv.js'

/**
 * The flags the worker itself sees. Both listeners go on before either event:
 * when a thread ends, Node delivers a message still in flight and then emits
 * 'exit' in one go, so an 'exit' listener added once the message has arrived
 * can miss it (a loop of such workers hung within 1 to 62 of them).
 */
async function workerArgv(worker: Worker): Promise<string[]> {
  const [[argv]] = (await Promise.all([once(worker, 'message'), once(worker, 'exit')])) as [[string[]], unknown[]]
  return argv
}

const REPORT_ARGV = "require('node:worker_threads').parentPort.postMessage(process.execArgv)"

describe('startWorker', () => {
  it('starts a worker whose flags include a V8 option, without that option', async () => {
    // new Worker() alone throws ERR_WORKER_INVALID_EXEC_ARGV for this list.
    const worker = startWorker(REPORT_ARGV, { eval: true, execArgv: ['--max-old-space-size=256', '--no-warnings', '--title=x', '--conditions=edgeserve-test'] })
    expect(await workerArgv(worker)).toEqual(['--no-warnings', '--conditions=edgeserve-test'])
  })

  it('passes a list Node accepts unchanged', async () => {
    const worker = startWorker(REPORT_ARGV, { eval: true, execArgv: ['--no-warnings', '--conditions=edgeserve-test'] })
    expect(await workerArgv(worker)).toEqual(['--no-warnings', '--conditions=edgeserve-test'])
  })

  it('rethrows any other error', () => {
    // A relative path is refused before the flags are looked at.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- Vitest's asymmetric matchers are typed any, to fit anywhere
    expect(() => startWorker('worker.js', { execArgv: ['--max-old-space-size=256'] })).toThrow(expect.objectContaining({ code: 'ERR_WORKER_PATH' }))
  })
})
