import type { FromWorker, WholeResponse } from './protocol.js'

type Port = { postMessage(message: FromWorker, transfer: ArrayBuffer[]): void }

/**
 * How a replica's thread posts to the server thread, with whole responses
 * gathered. A batch's answers are ready together, in one run of promise jobs,
 * and every postMessage costs this thread a serialization and the server's
 * thread a wake-up and a 'message' event. So a whole response waits in the
 * outbox for a promise job queued behind it, and the responses that arrived
 * meanwhile leave with it as one message. Any other message empties the
 * outbox first: the server sees everything in the order it was posted, and a
 * message that cannot be cloned still throws where it is posted.
 *
 * The wait is that of the promise jobs queued before the first response; one
 * of them could start the next batch's model run, so under load a batch's
 * answers may wait for a few milliseconds.
 */
export function outboxSender(port: Port): (message: FromWorker, transfer?: ArrayBuffer[]) => void {
  let responses: WholeResponse[] = []
  let transfers: ArrayBuffer[] = []

  const flush = (): void => {
    if (responses.length === 0) return
    const message: FromWorker = responses.length === 1 ? responses[0]! : { type: 'responses', responses }
    const transfer = transfers
    responses = []
    transfers = []
    port.postMessage(message, transfer)
  }

  return (message, transfer = []) => {
    if (message.type === 'response') {
      if (responses.length === 0) queueMicrotask(flush)
      responses.push(message)
      transfers.push(...transfer)
      return
    }
    flush()
    port.postMessage(message, transfer)
  }
}
