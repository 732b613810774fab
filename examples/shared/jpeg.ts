/**
 * JPEG to RGB with jpeg-js: pure JavaScript, and with `useTArray: true` it
 * returns a Uint8Array and never touches Buffer, so it runs unchanged in
 * Node, workerd and browsers. The frame size is read from the file's SOF
 * segment and checked before jpeg-js allocates anything.
 */
import jpeg from 'jpeg-js'
import { ImageDecodeError, MAX_IMAGE_PIXELS, checkDimensions, messageOf, type RgbImage } from './pixels.js'

/** SOFn markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) are not frames. */
const isStartOfFrame = (m: number): boolean => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc

/** Walk the marker segments up to the first SOFn and return its size. */
function readJpegSize(bytes: Uint8Array): { width: number; height: number } {
  let offset = 2 // after SOI
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) throw new ImageDecodeError('corrupt', 'invalid JPEG: bad marker')
    const marker = bytes[offset + 1] ?? 0
    if (marker === 0xff) {
      offset++ // fill byte
      continue
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2 // segments without a length
      continue
    }
    if (marker === 0xda || marker === 0xd9) break // scan data or end before any frame header
    const length = ((bytes[offset + 2] ?? 0) << 8) | (bytes[offset + 3] ?? 0)
    if (isStartOfFrame(marker)) {
      if (offset + 9 > bytes.length) break
      const height = ((bytes[offset + 5] ?? 0) << 8) | (bytes[offset + 6] ?? 0)
      const width = ((bytes[offset + 7] ?? 0) << 8) | (bytes[offset + 8] ?? 0)
      return { width, height }
    }
    if (length < 2) throw new ImageDecodeError('corrupt', 'invalid JPEG: bad segment length')
    offset += 2 + length
  }
  throw new ImageDecodeError('corrupt', 'invalid JPEG: no frame header (the file is cut short, or not a JPEG)')
}

export function decodeJpeg(bytes: Uint8Array): RgbImage {
  const { width, height } = readJpegSize(bytes)
  checkDimensions('JPEG', width, height)
  try {
    const img = jpeg.decode(bytes, {
      useTArray: true,
      formatAsRGBA: false,
      // Fail on missing data instead of returning a partly gray image.
      tolerantDecoding: false,
      maxResolutionInMP: MAX_IMAGE_PIXELS / 1e6,
    })
    return { width: img.width, height: img.height, data: img.data }
  } catch (error) {
    // jpeg-js reports a file cut short as a marker it did not find; name it as what it is.
    const reason = endsBeforeEndOfImage(bytes) ? 'the file is cut short: it ends before its end-of-image marker' : messageOf(error)
    throw new ImageDecodeError('corrupt', `invalid JPEG: ${reason}`, { cause: error })
  }
}

/**
 * Whether the file holds no end-of-image marker (FF D9). Coded data never
 * holds those two bytes (an FF there is followed by 00 or a restart
 * marker), so a file without them was cut short. A thumbnail's own marker
 * inside the metadata makes the answer no: then jpeg-js's message stands.
 */
function endsBeforeEndOfImage(bytes: Uint8Array): boolean {
  for (let i = bytes.length - 2; i >= 2; i--) if (bytes[i] === 0xff && bytes[i + 1] === 0xd9) return false
  return true
}
