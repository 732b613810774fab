/**
 * The request-path overhead app: a bare Hono route beside deployment routes
 * whose deployments do no work, so that what the bench measures between them
 * is what edgeserve adds to a request (routing, replica, batch, response).
 */
import { Hono } from 'hono'
import { batch, deployment, ingress } from '../../src/index.js'

/** Answers at once: the cost of reaching a replica and coming back. */
export class NoOp {
  fetch(): string {
    return 'ok'
  }
}

/** Answers through a batched method that does nothing: the cost of the batch queue too. */
export class BatchedNoOp {
  echo = batch((items: number[]) => items, { maxBatchSize: 64 })

  async fetch(): Promise<string> {
    await this.echo(1)
    return 'ok'
  }
}

export const noOp = deployment(NoOp)
export const batchedNoOp = deployment(BatchedNoOp)

export const app = new Hono()
  .get('/hello', (c) => c.text('ok'))
  .get('/noop', ingress(noOp))
  .get('/noop-batched', ingress(batchedNoOp))
export default app
