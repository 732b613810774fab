import type { Deployment } from '../../deployment/deployment.js'
import { replicaIndexOf, type ReplicaNamespace, type ReplicaStub } from '../../deployment/namespace.js'
import type { Outcome } from '../../deployment/outcome.js'
import { Replica, type CallMeta } from '../../deployment/replica.js'

/**
 * In-process replicas behind the shape of a `DurableObjectNamespace`, so the
 * router, ingress and handles run the same code on Node as on Workers.
 * Ids are the replica names ("<deployment>/<i>"), as `idFromName` gives.
 */
export class LocalNamespace implements ReplicaNamespace {
  readonly replicas: Replica[]
  readonly local = true

  constructor(
    readonly deployment: Deployment,
    env: unknown = {},
  ) {
    this.replicas = Array.from({ length: deployment.options.numReplicas }, (_, i) => new Replica(deployment, i, env))
  }

  idFromName(name: string): string {
    return name
  }

  get(id: string): ReplicaStub {
    const replica = this.replicas[replicaIndexOf(this.deployment, id)]!
    return new LocalStub(replica)
  }
}

class LocalStub implements ReplicaStub {
  constructor(private readonly replica: Replica) {}

  fetch(request: Request): Promise<Response> {
    return this.replica.fetch(request)
  }

  invoke(method: string, args: unknown[], meta?: CallMeta): Promise<Outcome> {
    return this.replica.call(method, args, meta)
  }
}
