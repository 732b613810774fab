/**
 * The model id a request or handle call of a multiplexed deployment names
 * (see multiplexed.ts). Its own small file: the HTTP client sends it too.
 */
import { HTTPError } from '../errors.js'

/** The header a request names its model with. */
export const MODEL_ID_HEADER = 'edgeserve-multiplexed-model-id'
/** The longest model id accepted, in UTF-16 code units. */
export const MAX_MODEL_ID_LENGTH = 256

/**
 * A model id as received (header or handle option), checked: a non-empty
 * string of at most 256 characters without control characters. Anything
 * else is the caller's mistake, a 400 that says which rule it broke.
 */
export function checkModelId(value: unknown, from: string): string {
  if (typeof value !== 'string') throw new HTTPError(400, `${from} must be a string, received ${typeof value}`)
  if (value === '') throw new HTTPError(400, `${from} is empty: name the model to use`)
  if (value.length > MAX_MODEL_ID_LENGTH) {
    throw new HTTPError(400, `${from} is ${value.length} characters long; at most ${MAX_MODEL_ID_LENGTH} are allowed`)
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new HTTPError(400, `${from} contains a control character`)
  return value
}
