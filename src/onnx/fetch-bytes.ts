/**
 * A model's bytes from a `Response`, or from a URL fetched with the runtime's
 * `fetch` (the same on Node, workerd and browsers). A response that is not
 * 2xx is refused with its status, so a 404 page is never fed to ORT as a model.
 */
export async function responseBytes(response: Response, source?: string | URL): Promise<Uint8Array> {
  if (!response.ok) {
    const from = source === undefined ? '' : ` from ${String(source)}`
    throw new Error(`could not load the model${from}: the response was ${response.status}`)
  }
  return new Uint8Array(await response.arrayBuffer())
}

export async function fetchBytes(source: string | URL): Promise<Uint8Array> {
  return responseBytes(await fetch(source), source)
}
