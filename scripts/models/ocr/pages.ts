/**
 * The OCR pipeline's accuracy pages, built in memory: a letter in several
 * sizes and stroke weights, a receipt with prices at the right margin, the
 * letter upside down, a noisy JPEG and a tall page. Deterministic (bitmap
 * font, fixed noise sequence, deterministic encoders), so the committed
 * files can be rebuilt and compared.
 *
 * The bitmap font has one face; "fonts" here are its weights (bold 0-2) and
 * spacing, at scales 2 to 5 (18 to 45 px tall lines).
 */
import { encode as encodePng } from 'fast-png'
import jpeg from 'jpeg-js'
import type { RgbImage } from '../../../examples/ocr-direction/image.js'
import { addNoise, renderPage, type PlacedText } from './render-page.js'
import { rotate180 } from './render-text.js'

export interface PageEntry {
  file: string
  /** The page's text: rows top to bottom, boxes in a row joined by a space. */
  text: string
  width: number
  height: number
}

const LETTER: PlacedText[] = [
  { text: 'Quarterly Report', x: 24, y: 20, style: { scale: 5, bold: 2 } },
  { text: 'Sales grew by 12 percent this quarter.', x: 24, y: 90, style: { scale: 3, bold: 1 } },
  { text: 'New stores opened in Paris and Madrid.', x: 24, y: 135, style: { scale: 3, bold: 0, tracking: 2 } },
  { text: 'Please send questions to the finance team.', x: 24, y: 180, style: { scale: 2, bold: 1 } },
  { text: 'Thank you, Maria', x: 24, y: 220, style: { scale: 4, bold: 1 } },
]

const ITEMS: [string, string][] = [
  ['Coffee', '3.50'],
  ['Bagel with cream', '4.25'],
  ['Orange juice', '2.95'],
  ['Muffin', '2.75'],
  ['Tax', '1.08'],
]
const RECEIPT: PlacedText[] = [
  { text: 'CORNER CAFE', x: 130, y: 20, style: { scale: 4, bold: 2 } },
  ...ITEMS.flatMap(([item, price], i): PlacedText[] => [
    { text: item, x: 24, y: 90 + i * 48, style: { scale: 3 } },
    { text: price, x: 456, y: 90 + i * 48, alignRight: true, style: { scale: 3 } },
  ]),
  { text: 'TOTAL', x: 24, y: 350, style: { scale: 3, bold: 2 } },
  { text: '14.53', x: 456, y: 350, alignRight: true, style: { scale: 3, bold: 2 } },
]

const TALL: PlacedText[] = [
  'Chapter One',
  'It was a bright cold day in April.',
  'The clocks were striking thirteen.',
  'Winston Smith walked home quickly.',
  'The hallway smelt of boiled cabbage.',
  'At one end a poster was tacked up.',
].map((text, i) => ({ text, x: 20, y: 40 + i * 220, style: { scale: 3, bold: i === 0 ? 2 : 1 } }))

const textOf = (items: readonly PlacedText[], rows: readonly (readonly number[])[]): string =>
  rows.map((row) => row.map((i) => items[i]!.text).join(' ')).join('\n')
const singleRows = (items: readonly PlacedText[]): number[][] => items.map((_, i) => [i])

function toGrayPng(img: RgbImage): Uint8Array {
  const gray = new Uint8Array(img.width * img.height)
  for (let i = 0; i < gray.length; i++) gray[i] = img.data[i * 3]!
  return encodePng({ width: img.width, height: img.height, data: gray, channels: 1, depth: 8 })
}

function toJpeg(img: RgbImage, quality: number): Uint8Array {
  const rgba = new Uint8Array(img.width * img.height * 4)
  for (let i = 0; i < img.width * img.height; i++) {
    rgba.set(img.data.subarray(i * 3, i * 3 + 3), i * 4)
    rgba[i * 4 + 3] = 255
  }
  return new Uint8Array(jpeg.encode({ width: img.width, height: img.height, data: rgba }, quality).data)
}

export function buildPageFixtures(): { files: Map<string, Uint8Array>; pages: PageEntry[] } {
  const files = new Map<string, Uint8Array>()
  const pages: PageEntry[] = []
  const add = (file: string, bytes: Uint8Array, text: string, img: RgbImage): void => {
    files.set(file, bytes)
    pages.push({ file, text, width: img.width, height: img.height })
  }
  const letter = renderPage(860, 280, LETTER)
  const letterText = textOf(LETTER, singleRows(LETTER))
  add('letter.png', toGrayPng(letter), letterText, letter)
  add('letter.rot180.png', toGrayPng(rotate180(letter)), letterText, letter)
  add('letter.noisy.jpg', toJpeg(addNoise(letter, 60), 60), letterText, letter)
  const receipt = renderPage(480, 400, RECEIPT)
  const receiptRows = [[0], ...ITEMS.map((_, i) => [1 + 2 * i, 2 + 2 * i]), [RECEIPT.length - 2, RECEIPT.length - 1]]
  add('receipt.png', toGrayPng(receipt), textOf(RECEIPT, receiptRows), receipt)
  const tall = renderPage(680, 1400, TALL)
  add('tall.png', toGrayPng(tall), textOf(TALL, singleRows(TALL)), tall)
  files.set('manifest.json', new TextEncoder().encode(JSON.stringify({ pages }, null, 2) + '\n'))
  return { files, pages }
}
