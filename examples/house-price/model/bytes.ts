/** The model's bytes on Node (and any runtime with a file system). */
import { readFile } from 'node:fs/promises'

export default async function modelBytes(): Promise<Uint8Array> {
  return new Uint8Array(await readFile(new URL('./house-price.onnx', import.meta.url)))
}
