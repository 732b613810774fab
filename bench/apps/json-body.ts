/**
 * The same JSON route written two ways, for the ratio of what the
 * web-standard calls cost against edgeserve's helpers: both read the
 * house-price body, check its features and answer one prediction's shape.
 */
import { deployment, readJson } from '../../src/index.js'
import { parseFeatures } from '../../examples/house-price/features.js'

/** `readJson()` and a plain value, as the examples were written before request.json() was as fast. */
export class JsonHelpers {
  async fetch(request: Request) {
    const body = (await readJson(request, 16 * 1024)) as { features?: unknown }
    parseFeatures(body.features)
    return { prediction: 0 }
  }
}

/** `request.json()` and `Response.json()`, as users write it. */
export class JsonWeb {
  async fetch(request: Request) {
    const body = (await request.json()) as { features?: unknown }
    parseFeatures(body.features)
    return Response.json({ prediction: 0 })
  }
}

export const jsonHelpers = deployment(JsonHelpers)
export const jsonWeb = deployment(JsonWeb)
