/**
 * Character error rate: edit distance (insertions, deletions, substitutions)
 * from the reading to the truth, over the truth's length.
 */
export function characterErrorRate(read: string, truth: string): number {
  const a = Array.from(read)
  const b = Array.from(truth)
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return b.length === 0 ? (a.length === 0 ? 0 : 1) : previous[b.length]! / b.length
}

/** With spaces: every run of whitespace (newlines too) counts as one space. */
export const withSpaces = (text: string): string => text.trim().replace(/\s+/g, ' ')
/** Spaces ignored: the recognizer sometimes drops the space between English words. */
export const withoutSpaces = (text: string): string => text.replace(/\s+/g, '')
