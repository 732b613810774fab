export { ThreadNamespace, ThreadReplica, type ThreadsOption } from './namespace.js'
export { inReplicaThread } from './hook.js'
