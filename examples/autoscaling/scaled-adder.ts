import { deployment } from 'edgeserve'
import { BatchAdder } from '../adder/batch-adder.js'

/**
 * The batching tutorial's adder, autoscaled (Ray's `autoscaling_config`).
 * Idle, it runs no replica at all; the first request starts one and waits
 * for it. Under load it grows to four replicas, each aiming to hold about one
 * batch's worth of requests (`targetOngoingRequests` = `maxBatchSize`, 4), and
 * after ten quiet seconds it shrinks again, each replica answering what it
 * holds before it goes. `workMs` stands in for a model's compute time.
 */
export const scaledAdder = deployment(BatchAdder, {
  name: 'ScaledAdder',
  autoscaling: { minReplicas: 0, maxReplicas: 4, targetOngoingRequests: 4, upscaleDelayS: 1, downscaleDelayS: 10, lookBackPeriodS: 3 },
}).bind({ workMs: 50 })
