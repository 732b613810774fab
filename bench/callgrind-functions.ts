/**
 * Self instructions per function from a callgrind profile taken with
 * `--dump-instr=yes`, JIT code included: V8's code map
 * (`node --perf-basic-prof`, /tmp/perf-<pid>.map) names each address of
 * optimized JavaScript, which callgrind itself only knows as "???".
 * Used by engine-instructions.ts --by-function.
 */
import { readFileSync } from 'node:fs'

type CodeRange = { start: number; end: number; name: string }

function readCodeMap(path: string): CodeRange[] {
  const ranges: CodeRange[] = []
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line)
    if (!match) continue
    const start = parseInt(match[1]!, 16)
    ranges.push({ start, end: start + parseInt(match[2]!, 16), name: jsName(match[3]!) })
  }
  return ranges.sort((a, b) => a.start - b.start)
}

/** `JS:*caller file:///tmp/x/driver.mjs:3930:24` → `caller (JS)`: one name whatever the tier or the bundle. */
function jsName(entry: string): string {
  const js = /^JS:[~^+*]?(\S*)/.exec(entry)
  if (js) return `${js[1] || '(anonymous)'} (JS)`
  return entry
}

function lookup(ranges: CodeRange[], address: number): string | undefined {
  let low = 0
  let high = ranges.length - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    if (ranges[middle]!.start <= address) low = middle + 1
    else high = middle - 1
  }
  const range = ranges[high]
  return range !== undefined && address < range.end ? range.name : undefined
}

/**
 * Self cost by function. Callgrind's positions are absolute (0x…) or
 * relative to the previous one (+n / -n, in decimal) or the same (*); a
 * cost line after `calls=` is the call's inclusive cost, not self cost.
 */
export function selfCostByFunction(profilePath: string, codeMapPath: string): Map<string, number> {
  const ranges = readCodeMap(codeMapPath)
  const names = { fn: new Map<string, string>(), ob: new Map<string, string>() }
  const costs = new Map<string, number>()
  let fn = ''
  let object = ''
  let address = 0
  let inclusiveNext = false
  for (const line of readFileSync(profilePath, 'utf8').split('\n')) {
    const named = /^(fn|ob|cfn|cob)=\((\d+)\)(?: (.*))?$/.exec(line)
    if (named) {
      const kind = named[1]!.endsWith('fn') ? 'fn' : 'ob'
      if (named[3] !== undefined) names[kind].set(named[2]!, named[3])
      const name = names[kind].get(named[2]!) ?? '???'
      if (named[1] === 'fn') fn = name
      else if (named[1] === 'ob') object = name
      continue
    }
    if (line.startsWith('calls=')) {
      inclusiveNext = true
      continue
    }
    const position = /^(0x[0-9a-f]+|[+-]\d+|\*) \S+ (\d+)/.exec(line)
    if (!position) continue
    const at = position[1]!
    if (at.startsWith('0x')) address = parseInt(at, 16)
    else if (at !== '*') address += Number(at)
    if (inclusiveNext) {
      inclusiveNext = false
      continue
    }
    const name = object === '???' ? (lookup(ranges, address) ?? 'unnamed JIT code') : fn.replace(/\(.*$/, '')
    costs.set(name, (costs.get(name) ?? 0) + Number(position[2]))
  }
  return costs
}
