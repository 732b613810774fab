/**
 * Ray Serve's text generator tutorial: edgeserve run examples/text-generator/app.ts --name Text-Completion-App
 *   curl "http://127.0.0.1:8000/?text=Once+upon+a+time"
 *   curl -N "http://127.0.0.1:8000/stream?text=Once+upon+a+time"
 */
import { Hono } from 'hono'
import { ingress } from 'edgeserve'
import { textGenerator } from './generator.js'

export const app = new Hono().get('/', ingress(textGenerator)).get('/stream', ingress(textGenerator))
export default app
