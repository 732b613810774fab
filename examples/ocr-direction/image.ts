/**
 * Decode an uploaded PNG or JPEG to 8-bit pixels (gray or RGB), with the
 * same code in Node, Cloudflare workerd and browsers: fast-png and jpeg-js,
 * both plain JavaScript. The wrappers in examples/shared check an untrusted
 * file's size before the library allocates for it (see png.ts and jpeg.ts).
 */
import { decodeJpeg } from '../shared/jpeg.js'
import { ImageDecodeError, type DecodedImage } from '../shared/pixels.js'
import { decodePng, isPng } from '../shared/png.js'

export { ImageDecodeError, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, type DecodedImage, type GrayImage, type RgbImage } from '../shared/pixels.js'

export type ImageFormat = 'png' | 'jpeg'

/** The format named by the file's magic bytes, or null for anything else. */
export function sniffFormat(bytes: Uint8Array): ImageFormat | null {
  if (isPng(bytes)) return 'png'
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg'
  return null
}

/**
 * Pixels of a PNG or JPEG. Gray PNGs stay gray (`channels: 1`); everything
 * else is RGB. Every failure is an ImageDecodeError.
 */
export function decodeImage(bytes: Uint8Array): DecodedImage {
  const format = sniffFormat(bytes)
  if (format === 'png') return decodePng(bytes)
  if (format === 'jpeg') return decodeJpeg(bytes)
  throw new ImageDecodeError('unsupported', 'unsupported image format: expected PNG or JPEG bytes')
}
