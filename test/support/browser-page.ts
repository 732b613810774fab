/**
 * What the browser tests that run code in a page share: the page's script
 * bundled by esbuild as a browser would get it (the `browser` condition,
 * edgeserve from src/), a loopback server for exactly the files the test
 * names (anything else is a 404 the test can see), and a Chromium launched
 * with exactly the flags given.
 */
import { createReadStream, existsSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser } from 'playwright-core'
import { SOURCE_CONDITION } from '../setup/source-conditions.js'
import { CHROMIUM } from './chromium.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** onnxruntime-web's dist folder: its .mjs and .wasm files, which ORT loads from next to the bundle. */
export const ORT_DIST = dirname(createRequire(import.meta.url).resolve('onnxruntime-web'))

/** Bundle a page's entry for the browser, with the browser branches of edgeserve/onnx and the examples' imports. */
export async function bundlePage(entry: string, outfile: string): Promise<void> {
  const { build } = await import('esbuild')
  await build({
    entryPoints: [entry],
    outfile,
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'browser',
    conditions: [SOURCE_CONDITION, 'browser'],
    format: 'esm',
    target: 'es2022',
    logLevel: 'warning',
  })
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
}

export interface FileServer {
  base: string
  /** Paths asked for that the server had nothing for: a page asking for a file it should not need shows up here. */
  misses: string[]
  close(): Promise<void>
}

/**
 * Serve `routes` (URL path -> file) on a loopback port, plus ORT's dist
 * files under /app/ (next to a bundle at /app/main.js) and every file of
 * each `folders` entry (URL prefix -> directory) by name.
 */
export async function serveFiles(routes: Map<string, string>, folders: Record<string, string> = {}): Promise<FileServer> {
  const misses: string[] = []
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname
    let file = routes.get(path)
    const ortFile = /^\/app\/(ort[\w.-]*\.(?:mjs|wasm|map))$/.exec(path)?.[1]
    if (!file && ortFile && existsSync(join(ORT_DIST, ortFile))) file = join(ORT_DIST, ortFile)
    for (const [prefix, folder] of Object.entries(folders)) {
      const name = path.startsWith(prefix) ? path.slice(prefix.length) : ''
      if (!file && /^[\w.-]+$/.test(name) && existsSync(join(folder, name))) file = join(folder, name)
    }
    if (!file) {
      misses.push(path)
      response.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${path}`)
      return
    }
    const ext = /\.[a-z0-9]+$/.exec(basename(file))?.[0] ?? ''
    response.writeHead(200, { 'content-type': CONTENT_TYPES[ext] ?? 'application/octet-stream', 'cache-control': 'no-store' })
    createReadStream(file)
      .on('error', () => response.destroy())
      .pipe(response)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  return {
    base: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    misses,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The command line the browser tests document, minus what Playwright itself needs (see webgpu.test.ts). */
export const BASE_FLAGS = ['--headless', '--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run']
/** Gives headless Chromium a real (software, SwiftShader) WebGPU adapter on a machine without a GPU. */
export const WEBGPU_FLAGS = ['--enable-unsafe-webgpu']

/** A fresh Chromium with exactly BASE_FLAGS + `extra` and a throwaway profile under `dir`. */
export async function launchChromium(dir: string, extra: string[]): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  const profile = await mkdtemp(join(dir, 'profile-'))
  return chromium.launch({
    executablePath: CHROMIUM,
    // Playwright's defaults (including --enable-unsafe-swiftshader) are off, so the flags given are the whole story.
    ignoreDefaultArgs: true,
    args: [...BASE_FLAGS, ...extra, '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'],
    timeout: 20_000,
  })
}
