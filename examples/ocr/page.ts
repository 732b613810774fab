/**
 * `GET /ocr`: a page to try the pipeline. Its browser code is real
 * TypeScript in examples/ocr/page (checked against the DOM by its own
 * tsconfig), bundled by scripts/build-pages.ts into one HTML document with
 * its script and stylesheet inline, allowed by hash in a strict Content
 * Security Policy (as the dashboard is): nothing loads from, or is sent to,
 * any other origin.
 */
import { html, scriptHash, styleHash } from '#ocr-page'

/** Only the page's own script and style run; it talks to this origin only. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src '${scriptHash}'`,
  `style-src '${styleHash}'`,
  "connect-src 'self'",
  // The favicon is an empty data: URL, so the page makes no request for one.
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

export function ocrPageResponse(): Response {
  return new Response(html, {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
  })
}
