import { stripVTControlCharacters } from 'node:util'
import { eastAsianWidth } from 'get-east-asian-width'

const segmenter = new Intl.Segmenter()

/**
 * How many terminal columns `text` takes: escape sequences take none, a
 * combining mark or zero-width joiner none, a wide (CJK) or emoji grapheme
 * two, everything else one. The screen uses it to know how many rows a
 * wrapped line occupies, so it must agree with the terminal for the text the
 * command line prints; it does for letters, CJK and the common emoji.
 */
export function visibleWidth(text: string): number {
  const plain = stripVTControlCharacters(text)
  // The common case (ASCII only) needs no segmentation.
  if (/^[\x20-\x7e]*$/.test(plain)) return plain.length
  let width = 0
  for (const { segment } of segmenter.segment(plain)) {
    const code = segment.codePointAt(0)!
    if (code < 0x20 || (code >= 0x7f && code < 0xa0) || /^\p{Mark}+$/u.test(segment)) continue
    if (/\p{Extended_Pictographic}/u.test(segment) && (segment.length > 2 || /\uFE0F/.test(segment) || code >= 0x1f000)) {
      width += 2
      continue
    }
    width += eastAsianWidth(code)
  }
  return width
}

/** How many rows `text` (one line, no newline) fills on a terminal `columns` wide; an empty line fills one. */
export function rowsOf(text: string, columns: number): number {
  const width = visibleWidth(text)
  return Math.max(1, Math.ceil(width / Math.max(1, columns)))
}
