/** docs/benchmarks.md and docs/images/benchmarks.svg from a results object. */
/* eslint-disable @typescript-eslint/no-explicit-any */

const f = (x: number | null | undefined, digits = 0) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits))
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;')

function loadTable(rows: any[]): string {
  if (rows.length === 0) return '_not measured (see the error below)_'
  const lines = ['| endpoint | c | req/s | p50 ms | p99 ms | mean batch | errors + non-2xx |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: |']
  for (const r of rows) {
    lines.push(`| ${r.endpoint} | ${r.connections} | ${f(r.requestsPerS)} | ${f(r.p50Ms, 2)} | ${f(r.p99Ms, 2)} | ${f(r.meanBatchSize, 1)} | ${r.errors + r.non2xx} |`)
  }
  return lines.join('\n')
}

/** Grouped bars: req/s at c=64 per endpoint, Node and workerd, plus the model limit line. */
function chart(results: any): string {
  const endpoints = ['http-ceiling', 'ocr-unbatched', 'ocr-batched', 'mlp-unbatched', 'mlp-batched-timeout0.1', 'mlp-batched-timeout0']
  const at = (rows: any[], e: string) => rows.find((r: any) => r.endpoint === e && r.connections === 64)?.requestsPerS ?? 0
  const series = [
    { name: 'Node', color: '#2b6cb0', rows: results.node },
    { name: 'workerd (wrangler dev)', color: '#dd6b20', rows: results.workerd },
  ]
  const W = 760
  const H = 360
  const left = 70
  const bottom = 300
  const top = 40
  const max = Math.max(1, ...endpoints.flatMap((e) => series.map((s) => at(s.rows, e))))
  const scale = (v: number) => ((bottom - top) * Math.log10(1 + v)) / Math.log10(1 + max)
  const groupW = (W - left - 20) / endpoints.length
  const barW = groupW / 3
  const parts: string[] = []
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="11">`)
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`)
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="600">Requests/s at 64 connections (log scale)</text>`)
  for (const tick of [1, 10, 100, 1000, 10000, 100000]) {
    if (tick > max * 1.01) break
    const y = bottom - scale(tick)
    parts.push(`<line x1="${left}" x2="${W - 20}" y1="${y}" y2="${y}" stroke="#e2e8f0"/><text x="${left - 6}" y="${y + 4}" text-anchor="end" fill="#4a5568">${tick}</text>`)
  }
  endpoints.forEach((e, i) => {
    const x0 = left + i * groupW + barW / 2
    series.forEach((s, j) => {
      const v = at(s.rows, e)
      const h = scale(v)
      const x = x0 + j * barW
      parts.push(`<rect x="${x}" y="${bottom - h}" width="${barW - 2}" height="${h}" fill="${s.color}"><title>${esc(s.name)} ${esc(e)}: ${v.toFixed(0)} req/s</title></rect>`)
      if (v > 0) parts.push(`<text x="${x + (barW - 2) / 2}" y="${bottom - h - 3}" text-anchor="middle" fill="#1a202c" font-size="9">${v.toFixed(0)}</text>`)
    })
    parts.push(`<text x="${x0 + barW}" y="${bottom + 14}" text-anchor="middle" fill="#1a202c">${esc(e.replace('mlp-batched-', 'mlp-batched '))}</text>`)
  })
  const limit = Math.max(...(results.modelLimit.find((m: any) => m.threads === '1')?.rows ?? []).map((r: any) => r.itemsPerS))
  if (Number.isFinite(limit)) {
    const y = bottom - scale(limit)
    parts.push(`<line x1="${left}" x2="${W - 20}" y1="${y}" y2="${y}" stroke="#c53030" stroke-dasharray="5 4"/>`)
    parts.push(`<text x="${W - 22}" y="${y - 4}" text-anchor="end" fill="#c53030">OCR model limit, 1 thread: ${limit.toFixed(0)} items/s</text>`)
  }
  series.forEach((s, j) => {
    parts.push(`<rect x="${left + j * 200}" y="${H - 30}" width="12" height="12" fill="${s.color}"/><text x="${left + j * 200 + 18}" y="${H - 20}">${esc(s.name)}</text>`)
  })
  parts.push('</svg>')
  return parts.join('\n') + '\n'
}

export function renderReport(results: any, template: string): { markdown: string; svg: string } {
  const m = results.machine
  const machine = `${m.nproc} CPUs (\`nproc\`), ${m.cpuModel}, ${m.memoryGiB} GiB memory, Node ${m.node} on ${m.platform}. Mode: ${results.mode} (${results.settings.durationS} s per row after ${results.settings.warmupS} s of warm-up). Run ${results.date}, took ${f(results.elapsedS)} s.`

  const engineLines = ['| workload | engine | items/s | ns/item |', '| --- | --- | ---: | ---: |']
  for (const r of results.engine) engineLines.push(`| ${r.workload} | ${r.engine} | ${f(r.itemsPerS)} | ${f(r.nsPerItem)} |`)

  const sizes: number[] = results.modelLimit[0].rows.map((r: any) => r.batch)
  const limitLines = [`| numThreads | ${sizes.map((s) => `batch ${s}`).join(' | ')} |`, `| --- | ${sizes.map(() => '---:').join(' | ')} |`]
  for (const config of results.modelLimit) {
    limitLines.push(`| ${config.threads}${config.threads === 'default' ? ` (= ${config.effectiveNumThreads})` : ''} | ${config.rows.map((r: any) => f(r.itemsPerS)).join(' | ')} |`)
  }

  const generationLines = ['| batching | tokens/s | time to first token p50 | p95 | mean latency | 16 prompts done in |', '| --- | ---: | ---: | ---: | ---: | ---: |']
  for (const g of results.generation ?? []) {
    generationLines.push(`| ${g.mode} | ${f(g.tokensPerS)} | ${f(g.ttftP50Ms, 1)} ms | ${f(g.ttftP95Ms, 1)} ms | ${f(g.meanLatencyMs, 1)} ms | ${f(g.totalMs, 1)} ms |`)
  }

  const threadLines = ['| OCR replicas on threads | c | req/s | p50 ms | p99 ms | mean batch |', '| ---: | ---: | ---: | ---: | ---: | ---: |']
  for (const r of results.nodeThreads) threadLines.push(`| ${r.replicas} | ${r.connections} | ${f(r.requestsPerS)} | ${f(r.p50Ms, 2)} | ${f(r.p99Ms, 2)} | ${f(r.meanBatchSize, 1)} |`)

  const r = results.ratios
  const target = (ok: boolean | null) => (ok === null ? 'not measured' : ok ? 'met' : '**missed**')
  const ratioLines = [
    '| ratio | value | target | verdict | what it compares |',
    '| --- | ---: | --- | --- | --- |',
    `| \`ocr_batched_vs_unbatched_c64\` | ${f(r.ocr_batched_vs_unbatched_c64, 2)}× | ≥ 1.8× | ${target(r.ocr_batched_vs_unbatched_c64 >= 1.8)} | batched over unbatched OCR req/s, Node, c=64 |`,
    `| \`ocr_batched_vs_limit_c64\` | ${f(r.ocr_batched_vs_limit_c64 * 100, 0)}% | ≥ 90% | ${target(r.ocr_batched_vs_limit_c64 >= 0.9)} | ${results.ratioNotes.ocr_batched_vs_limit_c64} |`,
    `| \`mlp_batched_vs_http_ceiling_c64\` | ${f(r.mlp_batched_vs_http_ceiling_c64 * 100, 0)}% | ≥ 80% | ${target(r.mlp_batched_vs_http_ceiling_c64 >= 0.8)} | ${results.ratioNotes.mlp_batched_vs_http_ceiling_c64} |`,
    `| \`c1_added_p50_ms\` | ${f(r.c1_added_p50_ms, 3)} ms | ≤ 0.3 ms | ${target(r.c1_added_p50_ms <= 0.3)} | ${results.ratioNotes.c1_added_p50_ms} |`,
    `| \`engine_vs_dataloader\` | ${f(r.engine_vs_dataloader, 2)}× | ≥ 1× | ${target(r.engine_vs_dataloader >= 1)} | ${results.ratioNotes.engine_vs_dataloader} |`,
    `| \`workerd_vs_node_c64\` | ${r.workerd_vs_node_c64 === null ? '–' : f(r.workerd_vs_node_c64, 2) + '×'} | – | – | ${results.ratioNotes.workerd_vs_node_c64} |`,
  ]

  const fill: Record<string, string> = {
    MACHINE: machine,
    ENGINE: engineLines.join('\n'),
    MODEL_LIMIT: limitLines.join('\n'),
    NODE: loadTable(results.node),
    THREADS: threadLines.join('\n'),
    GENERATION: generationLines.join('\n'),
    WORKERD: loadTable(results.workerd) + (results.workerdError ? `\n\nwrangler dev failed: \`${results.workerdError.split('\n')[0]}\`` : ''),
    RATIOS: ratioLines.join('\n'),
  }
  const markdown = template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => fill[key] ?? `{{${key}}}`)
  return { markdown, svg: chart(results) }
}
