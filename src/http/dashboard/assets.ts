/** The dashboard's assets, served by the app itself (no CDN). */
export function dashboardAsset(pathname: string): Response | undefined {
  if (pathname !== '/-/dashboard') return undefined
  return new Response('<!doctype html><title>edgeserve dashboard</title><p>dashboard', {
    headers: { 'content-type': 'text/html; charset=utf-8' },
  })
}
