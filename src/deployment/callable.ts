import { HTTPError } from '../errors.js'

/**
 * Which methods a handle may call on a replica.
 *
 * Handle calls can come from another process (the RPC route, a Durable
 * Object stub), so the method name is untrusted input. Only what the class
 * itself declares is callable: its prototype methods and its own function
 * fields (`handleBatch = batch(...)`). Never `constructor`, never a name
 * starting with `_` (private by convention), never anything that
 * `Object.prototype` provides (`__proto__`, `toString`, `hasOwnProperty`...).
 */
const FORBIDDEN = new Set(Object.getOwnPropertyNames(Object.prototype))

export function findCallable(instance: object, name: unknown): (...args: unknown[]) => unknown {
  if (typeof name !== 'string' || name === '' || name === 'constructor' || name.startsWith('_') || FORBIDDEN.has(name)) {
    throw notCallable(name)
  }
  if (Object.hasOwn(instance, name)) {
    const value = (instance as Record<string, unknown>)[name]
    if (typeof value === 'function') return value as (...args: unknown[]) => unknown
    throw notCallable(name)
  }
  for (let proto: unknown = Object.getPrototypeOf(instance); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, name)
    if (!descriptor) continue
    // A getter is not a method: calling it through a handle would run code
    // the class never meant to expose as a call.
    if (typeof descriptor.value === 'function') return descriptor.value as (...args: unknown[]) => unknown
    break
  }
  throw notCallable(name)
}

function notCallable(name: unknown): HTTPError {
  const shown = typeof name === 'string' ? JSON.stringify(name.slice(0, 100)) : typeof name
  return new HTTPError(
    404,
    `method ${shown} cannot be called through a handle: only methods the deployment class declares, ` +
      "not 'constructor', '_'-prefixed names or Object.prototype members",
  )
}
