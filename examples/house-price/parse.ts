import { HTTPError } from 'edgeserve'
import { FeatureError, parseFeatures } from './features.js'

/** Request bodies are a few hundred bytes; refuse anything near this. */
export const BODY_LIMIT = 16 * 1024

/** A request body `{"features": [8 numbers]}` as a feature row; anything else is a 400, values out of range a 422. */
export function parseFeatureBody(body: unknown): number[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !('features' in body)) {
    throw new HTTPError(400, 'the body must be a JSON object {"features": [8 numbers]}')
  }
  try {
    return parseFeatures(body.features)
  } catch (error) {
    if (error instanceof FeatureError) throw new HTTPError(error.kind === 'shape' ? 400 : 422, error.message)
    throw error
  }
}
