import { CHARTS_JS } from './charts.js'
import { FORMAT_JS } from './format.js'
import { MAIN_JS } from './main.js'
import { STATS_JS } from './stats.js'
import { VIEW_JS } from './view.js'

/**
 * The dashboard's script: the parts share one module scope, in dependency
 * order, with the polling loop last because it starts running at once.
 */
export const DASHBOARD_JS = [FORMAT_JS, STATS_JS, CHARTS_JS, VIEW_JS, MAIN_JS].join('\n')
