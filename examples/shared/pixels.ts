/**
 * Decoded images as the examples pass them around: 8-bit samples, row-major,
 * in plain typed arrays that every runtime has (no Buffer, no canvas).
 */

/** Interleaved R, G, B bytes, `data.length === width * height * 3`. */
export interface RgbImage {
  width: number
  height: number
  channels?: 3
  data: Uint8Array
}

/**
 * One gray byte per pixel, `data.length === width * height`. A gray PNG
 * (the usual text-line crop) decodes to this: a third of the bytes to write,
 * and a third of the samples to resize.
 */
export interface GrayImage {
  width: number
  height: number
  channels: 1
  data: Uint8Array
}

export type DecodedImage = RgbImage | GrayImage

/** Largest accepted width or height. A text line is resized to 48 px high anyway. */
export const MAX_IMAGE_SIDE = 4096
/** Largest accepted width*height (16 megapixels): about 48 MB of RGB output. */
export const MAX_IMAGE_PIXELS = 16_000_000

/**
 * Why an upload could not be decoded. Every failure of the decoders is an
 * ImageDecodeError, so a server can map the whole class to 422 (or
 * `reason === 'too-large'` to 413) without parsing messages.
 */
export class ImageDecodeError extends Error {
  override readonly name = 'ImageDecodeError'
  constructor(
    readonly reason: 'unsupported' | 'corrupt' | 'too-large',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** Refuse sizes from a header before anything of that size is allocated. */
export function checkDimensions(format: string, width: number, height: number): void {
  if (width < 1 || height < 1) throw new ImageDecodeError('corrupt', `invalid ${format}: image is ${width}x${height}`)
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE || width * height > MAX_IMAGE_PIXELS) {
    throw new ImageDecodeError(
      'too-large',
      `image too large: ${width}x${height} (limit ${MAX_IMAGE_SIDE} px per side and ${MAX_IMAGE_PIXELS / 1e6} megapixels)`,
    )
  }
}

/** An error's message, with its cause's when the message only leads up to it ("...: " and the cause). */
export function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const message = error.message.trim()
  return message.endsWith(':') && error.cause !== undefined ? `${message} ${messageOf(error.cause)}` : message
}
