/**
 * CTC greedy decoding, as PaddleOCR's CTCLabelDecode: at each time step take
 * the most probable class, drop repeats of the previous step's class, then
 * drop the blank (class 0). The line's confidence is the mean probability of
 * the characters kept (0 for an empty line).
 *
 * PP-OCRv4's classes are: blank, the lines of ppocr_keys_v1.txt, then a space.
 */

/** The model's classes from the text of its character list. */
export function ctcClasses(characterList: string): string[] {
  const keys = characterList.split(/\r?\n/)
  if (keys.at(-1) === '') keys.pop()
  return ['', ...keys, ' ']
}

export interface DecodedLine {
  text: string
  confidence: number
}

/** Decode item `index` of a [N, steps, classes] probability output. */
export function ctcGreedyDecode(probs: Float32Array, index: number, steps: number, classes: readonly string[]): DecodedLine {
  const count = classes.length
  let text = ''
  let sum = 0
  let kept = 0
  let previous = -1
  for (let t = 0; t < steps; t++) {
    const base = (index * steps + t) * count
    let best = 0
    let bestP = probs[base]!
    for (let c = 1; c < count; c++) {
      const p = probs[base + c]!
      if (p > bestP) {
        bestP = p
        best = c
      }
    }
    if (best !== 0 && best !== previous) {
      text += classes[best]
      sum += bestP
      kept++
    }
    previous = best
  }
  return { text, confidence: kept === 0 ? 0 : sum / kept }
}
