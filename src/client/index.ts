/**
 * edgeserve/client: handles to deployments in another process, over HTTP
 * (Ray's handle from a driver script). The server enables the route with a
 * token (`edgeserve run --rpc-token`, or `EDGESERVE_RPC_TOKEN`).
 *
 * ```ts
 * import { connect } from 'edgeserve/client'
 * const handle = connect('http://127.0.0.1:8000', { token }).getDeploymentHandle<BatchAdder>('BatchAdder')
 * await handle.handleBatch.remote(41) // 42
 * ```
 */
import { makeHandle, type DeploymentHandle } from '../deployment/handle.js'
import type { Outcome } from '../deployment/outcome.js'
import { MODEL_ID_HEADER } from '../deployment/model-id.js'
import { RPC_PREFIX } from '../http/rpc.js'

export { DeploymentResponse, type DeploymentHandle } from '../deployment/handle.js'

export interface ConnectOptions {
  /** The server's RPC token. */
  token: string
  /** Replaces the global fetch (tests, proxies). */
  fetch?: typeof fetch | undefined
}

export interface Connection {
  getDeploymentHandle<I extends object>(name: string, options?: { app?: string | undefined }): DeploymentHandle<I>
}

export function connect(url: string, options: ConnectOptions): Connection {
  let base: URL | undefined
  try {
    base = new URL(url)
  } catch {
    // Refused below.
  }
  // "localhost:8000" parses, as a URL whose scheme is "localhost:".
  if (base === undefined || (base.protocol !== 'http:' && base.protocol !== 'https:')) {
    throw new TypeError(`connect() needs the server's http:// or https:// URL, like "http://127.0.0.1:8000", received ${JSON.stringify(url)}`)
  }
  if (typeof options?.token !== 'string' || options.token === '') {
    throw new TypeError('connect() needs { token }: the RPC token the server was started with')
  }
  const doFetch = options.fetch ?? fetch
  return {
    getDeploymentHandle<I extends object>(name: string, { app = 'default' } = {}) {
      return makeHandle<I>(async (method, args, signal, scope): Promise<Outcome> => {
        const path = [app, name, method].map(encodeURIComponent).join('/')
        const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' }
        if (scope.multiplexedModelId !== undefined) headers[MODEL_ID_HEADER] = scope.multiplexedModelId
        const response = await doFetch(new URL(RPC_PREFIX + path, base), {
          method: 'POST',
          headers,
          body: JSON.stringify({ args }),
          signal,
        })
        if (response.ok && response.body && response.headers.get('content-type')?.startsWith('application/x-ndjson')) {
          return { ok: true, stream: response.body }
        }
        const body = (await response.json().catch(() => null)) as { value?: unknown; error?: { type?: string; message?: string } } | null
        if (response.ok) return { ok: true, value: body?.value }
        return {
          ok: false,
          error: {
            type: body?.error?.type ?? 'HTTPError',
            message: body?.error?.message ?? `the server answered ${response.status}`,
            status: response.status,
          },
        }
      })
    },
  }
}
