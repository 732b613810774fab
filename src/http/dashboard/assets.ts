import { DASHBOARD_HTML } from './page.js'

/**
 * Inline script and style only, data from this origin only: the page can
 * neither load nor send anything elsewhere, which also keeps it honest
 * about having no CDN dependencies.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** The dashboard's assets, served by the app itself (no CDN, no file reads: Workers have no fs). */
export function dashboardAsset(pathname: string): Response | undefined {
  if (pathname !== '/-/dashboard') return undefined
  return new Response(DASHBOARD_HTML, {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
  })
}
