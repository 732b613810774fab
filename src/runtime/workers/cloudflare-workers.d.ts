/**
 * The part of `cloudflare:workers` this adapter uses. The full
 * @cloudflare/workers-types redeclare the DOM's globals, which clashes with
 * the one tsconfig that checks every runtime here; this subset does not.
 */
declare module 'cloudflare:workers' {
  export interface DurableObjectState {
    readonly id: { readonly name?: string; toString(): string }
    abort(reason?: string): void
    blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>
    readonly storage: {
      get<T>(key: string): Promise<T | undefined>
      put<T>(key: string, value: T): Promise<void>
      setAlarm(scheduledTime: number): Promise<void>
    }
  }

  /** Keep the running request's context alive until `promise` settles, past its answer. */
  export function waitUntil(promise: Promise<unknown>): void

  export abstract class DurableObject<Env = unknown> {
    protected readonly ctx: DurableObjectState
    protected readonly env: Env
    constructor(ctx: DurableObjectState, env: Env)
    fetch?(request: Request): Response | Promise<Response>
  }
}
