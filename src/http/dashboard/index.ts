/**
 * edgeserve/dashboard: the live dashboard page for `/-/dashboard`. A Worker
 * serves it only when given it, so a Worker that does not import this entry
 * does not ship the page:
 *
 * ```ts
 * import { dashboard } from 'edgeserve/dashboard'
 * export default serveWorker(app, { dashboard })
 * ```
 *
 * On Node, serve() loads it by itself (`serve(app, { dashboard: false })` turns it off).
 */
import { html, scriptHash, styleHash } from '#dashboard-page'
import type { Dashboard } from './page.js'

export type { Dashboard } from './page.js'

export const dashboard: Dashboard = Object.freeze({ html, scriptHash, styleHash })
