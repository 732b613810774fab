import { formatReceived } from '../../batching/options.js'

/**
 * The dashboard page as `/-/dashboard` serves it: built from
 * src/http/dashboard/client by scripts/build-pages.ts and exported as
 * `dashboard` by `edgeserve/dashboard`. This file holds only its type and how
 * to answer with it, so the routes that may serve it do not pull the page
 * itself into a Worker's bundle.
 */
export interface Dashboard {
  /** One HTML document with its script and stylesheet inline: no other request than the JSON it polls. */
  readonly html: string
  /** The inline script's CSP hash source, `sha256-<base64>`. */
  readonly scriptHash: string
  /** The inline stylesheet's CSP hash source, `sha256-<base64>`. */
  readonly styleHash: string
}

const isHashSource = (value: unknown) => typeof value === 'string' && /^sha256-[A-Za-z0-9+/]{43}=$/.test(value)

function isDashboard(value: unknown): value is Dashboard {
  if (typeof value !== 'object' || value === null) return false
  if (!('html' in value && 'scriptHash' in value && 'styleHash' in value)) return false
  return typeof value.html === 'string' && isHashSource(value.scriptHash) && isHashSource(value.styleHash)
}

/** The value itself when it is a dashboard page, else a TypeError that starts with `expected`. */
export function checkDashboard(value: unknown, expected: string): Dashboard {
  if (!isDashboard(value)) throw new TypeError(`${expected}, received ${formatReceived(value)}`)
  return value
}

/**
 * Only the page's own script and stylesheet run (by hash), and data comes
 * from this origin only: the page can neither load nor send anything
 * elsewhere, which also keeps it honest about having no CDN dependencies.
 */
function contentSecurityPolicy(page: Dashboard): string {
  return [
    "default-src 'none'",
    `script-src '${page.scriptHash}'`,
    `style-src '${page.styleHash}'`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/** The page, served by the app itself (no CDN, no file reads: Workers have no fs). */
export function dashboardResponse(page: Dashboard): Response {
  return new Response(page.html, {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
      'content-security-policy': contentSecurityPolicy(page),
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
  })
}
