/**
 * The batching core's host on Node, and on any runtime that has no
 * condition of its own in package.json's `#batching-host` import (see
 * host.ts): AsyncLocalStorage carries a request's context through every
 * await, the clock runs while code does, and timers and I/O belong to no
 * request.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { BatchingHost } from '../host.js'

export const host: BatchingHost = {
  contextStorage: () => new AsyncLocalStorage(),
  clockStandsStill: false,
  timersBelongToRequests: false,
  currentIo: () => undefined,
}
