import { checkDashboard, type Dashboard } from '../../http/dashboard/page.js'

/**
 * serve()'s page for `/-/dashboard`: the built-in one unless the app passes
 * its own or `false`. Imported on demand so that an app serving none does not
 * need the page built (it is generated, not in git: `npm run build:pages`).
 */
export async function dashboardFor(option: Dashboard | false | undefined): Promise<Dashboard | undefined> {
  if (option === false) return undefined
  if (option !== undefined) {
    return checkDashboard(
      option,
      "serve: options.dashboard must be false (serve no dashboard) or the page from 'edgeserve/dashboard'; leave it out for the built-in one",
    )
  }
  try {
    return (await import('../../http/dashboard/index.js')).dashboard
  } catch (error) {
    throw new Error(
      'serve: the dashboard page could not be loaded. In the edgeserve repository it is built by `npm run build:pages` ' +
        '(npm start, npm test and the edgeserve command run it); pass serve(app, { dashboard: false }) to serve without it.',
      { cause: error },
    )
  }
}
