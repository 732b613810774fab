/**
 * Vitest global setup: build the dashboard page before any test, so that a
 * run straight after editing src/http/dashboard/client (or in a checkout
 * where `npm install` never ran) serves the page as the sources say.
 */
import { buildDashboard } from '../../scripts/build-dashboard.js'

export default async function setup(): Promise<void> {
  await buildDashboard()
}
