/** A lone half of a surrogate pair. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * `text` with every lone surrogate replaced by U+FFFD. A server that cut a
 * string inside a character (a JavaScript `slice` through an emoji) sends it
 * as a `\ud83d` escape, which JSON.parse accepts; strict provider parsers
 * (Anthropic's) refuse the whole request that carries it, and a tool result
 * or a tool description is in every later request of the session.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD')
}
