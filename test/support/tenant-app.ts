/**
 * The multiplexing tests' app, served by Node (in process and on worker
 * threads, which import this module: it must stay free of side effects) and
 * by the test Worker under workerd. A "model" per tenant that records when
 * it is released, a batched method that says which model and batch each
 * answer came from, and which replica.
 */
import { Hono } from 'hono'
import { batch, deployment, getHandle, ingress, multiplexed, multiplexedModelId, replicaContext } from 'edgeserve'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface TenantAnswer {
  x: number
  /** The model that computed the answer: the tenant's own, unless batches mixed. */
  model: string
  /** The id the batch ran with, as its handler was told. */
  batchModel: string | undefined
  batchSize: number
  replica: number
  /** Models this replica released so far, in order. */
  released: string[]
}

export class TenantModels {
  readonly replica = replicaContext().replica
  readonly released: string[] = []

  readonly getModel = multiplexed(
    async (tenant: string) => {
      await sleep(10) // a load takes time: concurrent first requests must share it
      return { tenant, release: () => void this.released.push(tenant) }
    },
    { maxModelsPerReplica: 2 },
  )

  readonly score = batch(
    async (xs: number[], info) => {
      const model = await this.getModel(multiplexedModelId())
      return xs.map((x) => ({ x, model: model.tenant, batchModel: info.multiplexedModelId, batchSize: xs.length, replica: this.replica }))
    },
    { maxBatchSize: 8, batchWaitTimeoutS: 0.01 },
  )

  async fetch(request: Request): Promise<TenantAnswer> {
    const url = new URL(request.url)
    const holdMs = Number(url.searchParams.get('holdMs') ?? 0)
    // Holds a slot of maxOngoingRequests: how the spill-over test makes a replica busy.
    if (holdMs > 0) await sleep(holdMs)
    const answer = await this.score(Number(url.searchParams.get('x') ?? 0))
    return { ...answer, released: [...this.released] }
  }
}

export const tenants = deployment(TenantModels, { name: 'TenantModels', numReplicas: 3, maxOngoingRequests: 4 })
export const oneReplicaTenants = deployment(TenantModels, { name: 'OneReplicaTenants', numReplicas: 1 })

export const tenantApp = new Hono()
  .get('/tenants', ingress(tenants))
  .get('/tenants/one', ingress(oneReplicaTenants))
  // A handle call names its model with .options().
  .get('/tenants/handle', async (c) => {
    const handle = getHandle(tenants, c.env).options({ multiplexedModelId: c.req.query('tenant') ?? '' })
    return c.json(await handle.score.remote(Number(c.req.query('x') ?? 0)))
  })
  .get('/tenants/handle-bad', (c) => {
    try {
      getHandle(tenants, c.env).options({ multiplexedModelId: 'bell\u0007' })
      return c.json({ error: null })
    } catch (error) {
      return c.json({ error: `${(error as Error).name}: ${(error as Error).message}` })
    }
  })
