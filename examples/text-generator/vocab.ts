/**
 * The character vocabulary of the char-lm model in ./model/char-lm.onnx.
 *
 * The vocabulary is fixed and does not depend on the training text: id 0 is
 * padding, id 1 is "unknown", id 2 is newline and ids 3..97 are printable
 * ASCII 0x20..0x7e. A fixed table means any string (even non-ASCII) maps to
 * valid ids, and ./model/vocab.json is just this table written out.
 */
export const PAD_ID = 0
export const UNK_ID = 1
export const PAD_TOKEN = '<pad>'
export const UNK_TOKEN = '<unk>'

/** Index = token id. Tokens are single characters except the two specials. */
export const TOKENS: readonly string[] = [PAD_TOKEN, UNK_TOKEN, '\n', ...Array.from({ length: 0x7e - 0x20 + 1 }, (_, i) => String.fromCharCode(0x20 + i))]

export const VOCAB_SIZE = TOKENS.length

const ID_OF = new Map<string, number>(TOKENS.slice(2).map((t, i) => [t, i + 2]))

/** Text -> ids. "\r\n" and "\r" count as "\n", like the training corpus. */
export function encode(text: string): number[] {
  // Iterate by code point so an astral character becomes a single <unk>.
  return Array.from(text.replace(/\r\n?/g, '\n'), (ch) => ID_OF.get(ch) ?? UNK_ID)
}

/** One id -> its text: '' for padding, U+FFFD for unknown or out-of-range ids. */
export function decodeToken(id: number): string {
  if (id === PAD_ID) return ''
  if (id === UNK_ID) return '\uFFFD'
  return TOKENS[id] ?? '\uFFFD'
}

export function decode(ids: Iterable<number>): string {
  let s = ''
  for (const id of ids) s += decodeToken(id)
  return s
}
