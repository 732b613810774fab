/**
 * Vitest global setup: build the served pages (the dashboard, the OCR upload
 * page) before any test, so that a run straight after editing their browser
 * code (or in a checkout where `npm install` never ran) serves them as the
 * sources say.
 */
import { buildPages } from '../../scripts/build-pages.js'

export default async function setup(): Promise<void> {
  await buildPages()
}
