/**
 * `GET /ocr`: a page to try the pipeline. Pick a PNG or JPEG page; it is
 * posted to `POST /ocr`, drawn on a canvas with the boxes found, and the text
 * is shown beside it. One HTML document with its script and stylesheet
 * inline, allowed by hash in a strict Content Security Policy (as the
 * dashboard is): nothing loads from, or is sent to, any other origin.
 */
const STYLE = `
body { font: 15px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d1d1f; }
main { display: flex; gap: 1.5rem; align-items: flex-start; flex-wrap: wrap; }
canvas { max-width: min(100%, 720px); border: 1px solid #ccc; }
pre { white-space: pre-wrap; background: #f5f5f7; padding: .75rem; min-width: 16rem; margin: 0; }
#status { color: #555; }
#status.error { color: #b00020; }
`

const SCRIPT = `
const input = document.getElementById('file')
const status = document.getElementById('status')
const canvas = document.getElementById('page')
const output = document.getElementById('text')
input.addEventListener('change', async () => {
  const file = input.files[0]
  if (!file) return
  status.className = ''
  status.textContent = 'reading ' + file.name + '...'
  output.textContent = ''
  canvas.removeAttribute('data-lines')
  try {
    // The server judges the file first, so a broken one shows the server's own message.
    const response = await fetch('/ocr', { method: 'POST', body: file, headers: { 'content-type': file.type || 'application/octet-stream' } })
    const answer = await response.json()
    if (!response.ok) throw new Error(answer.error ? answer.error.message : 'HTTP ' + response.status)
    const bitmap = await createImageBitmap(file)
    canvas.width = bitmap.width
    canvas.height = bitmap.height
    const context = canvas.getContext('2d')
    context.drawImage(bitmap, 0, 0)
    context.lineWidth = Math.max(2, bitmap.width / 400)
    context.strokeStyle = '#e0245e'
    for (const line of answer.lines) {
      context.beginPath()
      line.box.forEach(([x, y], i) => (i === 0 ? context.moveTo(x, y) : context.lineTo(x, y)))
      context.closePath()
      context.stroke()
    }
    canvas.setAttribute('data-lines', String(answer.lines.length))
    output.textContent = answer.text
    status.textContent = answer.lines.length + ' lines'
  } catch (error) {
    status.className = 'error'
    status.textContent = String(error.message || error)
  }
})
`

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edgeserve OCR</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Read the text in an image</h1>
<p><input type="file" id="file" accept="image/png,image/jpeg"> <span id="status" role="status">PNG or JPEG, up to 16 megapixels</span></p>
<main><canvas id="page" width="0" height="0"></canvas><pre id="text" aria-label="text read"></pre></main>
<script>${SCRIPT}</script>
</body>
</html>
`

async function sha256Source(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))
  return `sha256-${btoa(String.fromCharCode(...digest))}`
}

let policy: Promise<string> | undefined

/** Only the page's own script and style run; it talks to this origin only. */
function contentSecurityPolicy(): Promise<string> {
  return (policy ??= Promise.all([sha256Source(SCRIPT), sha256Source(STYLE)]).then(([script, style]) =>
    [
      "default-src 'none'",
      `script-src '${script}'`,
      `style-src '${style}'`,
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  ))
}

export async function ocrPageResponse(): Promise<Response> {
  return new Response(HTML, {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': await contentSecurityPolicy(),
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
  })
}
