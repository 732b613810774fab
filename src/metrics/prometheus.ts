import type { Labels, MetricFamily, MetricsSnapshot } from './registry.js'

/** Merge snapshots (one per replica) by family name; their labels keep samples apart. */
export function mergeSnapshots(snapshots: MetricsSnapshot[]): MetricsSnapshot {
  const byName = new Map<string, MetricFamily>()
  for (const snapshot of snapshots) {
    for (const family of snapshot) {
      const seen = byName.get(family.name)
      if (!seen) byName.set(family.name, structuredClone(family))
      else (seen.samples as unknown[]).push(...structuredClone(family.samples))
    }
  }
  return [...byName.values()]
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
}

function renderLabels(labels: Labels, extra?: [string, string]): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`)
  if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`)
  return parts.length ? `{${parts.join(',')}}` : ''
}

function number(value: number): string {
  if (value === Infinity) return '+Inf'
  if (value === -Infinity) return '-Inf'
  return String(value)
}

/** The Prometheus text exposition format, version 0.0.4. */
export function renderPrometheus(snapshot: MetricsSnapshot): string {
  const lines: string[] = []
  for (const family of snapshot) {
    lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`)
    if (family.type === 'histogram') {
      for (const sample of family.samples) {
        family.buckets.forEach((bound, i) => {
          lines.push(`${family.name}_bucket${renderLabels(sample.labels, ['le', number(bound)])} ${sample.counts[i]}`)
        })
        lines.push(`${family.name}_bucket${renderLabels(sample.labels, ['le', '+Inf'])} ${sample.count}`)
        lines.push(`${family.name}_sum${renderLabels(sample.labels)} ${number(sample.sum)}`)
        lines.push(`${family.name}_count${renderLabels(sample.labels)} ${sample.count}`)
      }
    } else {
      for (const sample of family.samples) lines.push(`${family.name}${renderLabels(sample.labels)} ${number(sample.value)}`)
    }
  }
  return lines.join('\n') + '\n'
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
