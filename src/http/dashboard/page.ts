import { DASHBOARD_JS } from './client/index.js'
import { STYLES } from './styles.js'

/**
 * The whole dashboard as one HTML document: markup, style and script inline,
 * so it needs no other request than the JSON it polls and works the same on
 * Node and Workers. Nothing from the server is interpolated here; live data
 * reaches the DOM only through the script's textContent writes.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>edgeserve · dashboard</title>
<link rel="icon" href="data:,">
<style>${STYLES}</style>
</head>
<body>
<header class="top">
  <div class="brand">
    <svg class="mark" viewBox="0 0 22 22" aria-hidden="true"><rect x="2" y="12" width="4" height="8" rx="1"/><rect x="9" y="7" width="4" height="13" rx="1"/><rect x="16" y="2" width="4" height="18" rx="1"/></svg>
    <strong>edgeserve</strong><span class="sep">/</span><span>dashboard</span>
  </div>
  <div class="spacer"></div>
  <div class="total">All deployments <b data-testid="total-requests-rate" data-value="">—</b> req/s</div>
  <div class="status" data-testid="status" data-state="connecting"><span class="dot"></span><span class="status-text">Connecting…</span></div>
</header>
<main id="deployments">
  <p class="empty" data-testid="empty">Waiting for the first metrics…</p>
</main>
<footer class="page">Polls <code>/-/metrics.json</code> and <code>/-/routes</code> every second. Prometheus text at <a href="metrics">/-/metrics</a>; latency percentiles are estimated from histogram buckets, as <code>histogram_quantile</code> does.</footer>
<script type="module">${DASHBOARD_JS}</script>
</body>
</html>
`
