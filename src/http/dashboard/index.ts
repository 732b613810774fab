/**
 * The dashboard page for `/-/dashboard`, as scripts/build-dashboard.ts built
 * it from ./client.
 */
import { html, scriptHash, styleHash } from '#dashboard-page'
import type { Dashboard } from './page.js'

export type { Dashboard } from './page.js'

export const dashboard: Dashboard = Object.freeze({ html, scriptHash, styleHash })
