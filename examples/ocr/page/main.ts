/**
 * The OCR upload page: a picked PNG or JPEG is posted to `POST /ocr`, drawn
 * on the canvas with the boxes found, and the text is shown beside it. The
 * server judges the file first, so a broken one shows the server's own
 * message. When a page has been read, the canvas carries `data-lines` (how
 * many lines were found), which is what tests wait for.
 */

/** The parts of `POST /ocr`'s answer this page shows (examples/ocr/pipeline.ts has the whole). */
interface OcrAnswer {
  text: string
  lines: { box: [number, number][] }[]
}

interface ErrorAnswer {
  error?: { type?: string; message?: string }
}

const BOX_COLOUR = '#e0245e'

/** An element the page's markup must hold; a clear error beats a null dereference later. */
function required<T extends Element>(id: string, type: new () => T): T {
  const found = document.getElementById(id)
  if (!(found instanceof type)) throw new Error(`ocr page: the page has no ${type.name} #${id}`)
  return found
}

const input = required('file', HTMLInputElement)
const status = required('status', HTMLElement)
const canvas = required('page', HTMLCanvasElement)
const output = required('text', HTMLElement)

async function read(file: File): Promise<OcrAnswer> {
  const response = await fetch('/ocr', { method: 'POST', body: file, headers: { 'content-type': file.type || 'application/octet-stream' } })
  const answer = (await response.json()) as OcrAnswer & ErrorAnswer
  if (!response.ok) throw new Error(answer.error?.message ?? `HTTP ${response.status}`)
  return answer
}

/** The page as sent, with each line's box stroked over it. */
async function draw(file: File, answer: OcrAnswer): Promise<void> {
  const bitmap = await createImageBitmap(file)
  canvas.width = bitmap.width
  canvas.height = bitmap.height
  const context = canvas.getContext('2d')
  if (!context) throw new Error('this browser gives no 2D canvas')
  context.drawImage(bitmap, 0, 0)
  bitmap.close()
  context.lineWidth = Math.max(2, canvas.width / 400)
  context.strokeStyle = BOX_COLOUR
  for (const { box } of answer.lines) {
    context.beginPath()
    box.forEach(([x, y], i) => (i === 0 ? context.moveTo(x, y) : context.lineTo(x, y)))
    context.closePath()
    context.stroke()
  }
}

/** Send the chosen page and show what came back; a failure is shown in the status line, so this never rejects. */
async function show(file: File): Promise<void> {
  status.className = ''
  status.textContent = `reading ${file.name}...`
  output.textContent = ''
  canvas.removeAttribute('data-lines')
  try {
    const answer = await read(file)
    await draw(file, answer)
    canvas.setAttribute('data-lines', String(answer.lines.length))
    output.textContent = answer.text
    status.textContent = `${answer.lines.length} lines`
  } catch (error) {
    status.className = 'error'
    status.textContent = error instanceof Error ? error.message : String(error)
  }
}

input.addEventListener('change', () => {
  const file = input.files?.[0]
  if (file) void show(file)
})
