/**
 * What each part of the suite saw, kept as figures: answers by status, errors
 * by class, transport failures, latencies, memory. Every error body received
 * is scanned for stack traces and file paths as it arrives; the distinct ones
 * are also saved, so the last file can scan the whole suite's again.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { errorOf, type Answer } from './http.js'

export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url))
export const SECTIONS_DIR = `${RESULTS_DIR}sections/`
export const SUITE_LIMIT_MS = 5 * 60_000

/** A stack frame, a path of this checkout, a TypeScript source position, a dependency path. */
export const LEAK = /\bat .*\(|\/work\/|\.ts:\d+|node_modules/

const MAX_DISTINCT_BODIES = 400

export interface SectionFigures {
  section: string
  title: string
  startedAt: string
  durationMs: number
  requests: number
  concurrency?: number
  byStatus: Record<string, number>
  errorsByType: Record<string, number>
  transportErrors: Record<string, number>
  latencyMs?: { p50: number; p95: number; p99: number; max: number }
  errorBodiesScanned: number
  leaks: string[]
  facts: Record<string, unknown>
  distinctErrorBodies: string[]
}

export class Recorder {
  private started = Date.now()
  private readonly latencies: number[] = []
  private readonly bodies = new Set<string>()
  readonly figures: SectionFigures

  constructor(section: string, title: string) {
    this.figures = {
      section,
      title,
      startedAt: new Date().toISOString(),
      durationMs: 0,
      requests: 0,
      byStatus: {},
      errorsByType: {},
      transportErrors: {},
      errorBodiesScanned: 0,
      leaks: [],
      facts: {},
      distinctErrorBodies: [],
    }
  }

  /** Time the section from now (when its file does other work first). */
  restart(): void {
    this.started = Date.now()
    this.figures.startedAt = new Date().toISOString()
  }

  /** Count an answer; scan it if it is an error. */
  answer(answer: Answer): void {
    const f = this.figures
    f.requests++
    f.byStatus[answer.status] = (f.byStatus[answer.status] ?? 0) + 1
    this.latencies.push(answer.ms)
    if (answer.status >= 400) {
      const error = errorOf(answer)
      const type = error?.type ?? (answer.text === '' ? '(empty body)' : '(not a JSON error)')
      f.errorsByType[`${answer.status} ${type}`] = (f.errorsByType[`${answer.status} ${type}`] ?? 0) + 1
      this.scan(answer.text)
    }
  }

  /** Count a request that got no HTTP answer (refused, reset, timed out). */
  transport(error: unknown): void {
    const f = this.figures
    f.requests++
    const code = (error as { code?: string }).code ?? (error as Error).name ?? 'Error'
    f.transportErrors[code] = (f.transportErrors[code] ?? 0) + 1
  }

  /** Scan any text a client received with an error (SSE error events, RPC failures). */
  scan(text: string): void {
    this.figures.errorBodiesScanned++
    if (LEAK.test(text) && this.figures.leaks.length < 50) this.figures.leaks.push(text.slice(0, 500))
    if (this.bodies.size < MAX_DISTINCT_BODIES) this.bodies.add(text.slice(0, 1000))
  }

  fact(key: string, value: unknown): void {
    this.figures.facts[key] = value
  }

  get leaks(): string[] {
    return this.figures.leaks
  }

  save(): SectionFigures {
    const f = this.figures
    f.durationMs = Date.now() - this.started
    if (this.latencies.length > 0) {
      const sorted = Float64Array.from(this.latencies).sort()
      const at = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!)
      f.latencyMs = { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: round(sorted[sorted.length - 1]!) }
    }
    f.distinctErrorBodies = [...this.bodies]
    mkdirSync(SECTIONS_DIR, { recursive: true })
    writeFileSync(`${SECTIONS_DIR}${f.section}.json`, JSON.stringify(f, null, 2) + '\n')
    return f
  }
}

export function loadSections(): SectionFigures[] {
  let names: string[]
  try {
    names = readdirSync(SECTIONS_DIR).filter((n) => n.endsWith('.json'))
  } catch {
    return []
  }
  return names.sort().map((n) => JSON.parse(readFileSync(SECTIONS_DIR + n, 'utf8')) as SectionFigures)
}

export const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits
