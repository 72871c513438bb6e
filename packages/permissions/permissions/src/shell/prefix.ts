import type { ShellPart } from './command'

/**
 * The words of a rule's command prefix: `"git status"` → `['git', 'status']`.
 * A trailing `*` or `:*` (the spelling other tools use for "and anything
 * after") is dropped: a prefix already matches whatever follows it.
 */
export function prefixWords(prefix: string): string[] {
  const words = prefix.trim().split(/\s+/).filter((word) => word !== '')
  const last = words[words.length - 1]
  if (last === '*') words.pop()
  else if (last?.endsWith(':*')) words[words.length - 1] = last.slice(0, -2)
  return words.filter((word) => word !== '')
}

/**
 * Whether `part` starts with `words` exactly, as an allow needs: no
 * variables set for it, and each of the first words known and equal (a word
 * computed at run time, or one bash may expand into other words, is not).
 * `git status -s` starts with `git status`; `git statusx`,
 * `PATH=/x git status` and `$GIT status` do not.
 */
export function startsWith(part: ShellPart, words: readonly string[]): boolean {
  if (part.assignments || part.words.length < words.length || part.words.length === 0) return false
  for (let i = 0; i < words.length; i++) {
    const word = part.words[i]!
    if (word.text !== words[i] || word.expands) return false
  }
  return true
}

/** Commands that run the command named by their arguments. */
export const WRAPPERS = new Set(['sudo', 'doas', 'command', 'builtin', 'exec', 'nohup', 'time', 'nice', 'ionice', 'env', 'timeout', 'xargs', 'stdbuf', 'setsid', 'unbuffer', 'watch', 'strace', 'chrt', 'taskset', 'flock'])

/**
 * Whether `part` runs something that starts with `words`, as deny and ask
 * rules read it: at its start (whatever variables it sets), or, when it
 * starts with a command that runs another (`sudo`, `env`, `timeout 5`,
 * `xargs`, `nice -n 5`, …), anywhere after that. Erring towards a match is
 * the safe side for a denial.
 */
export function mentions(part: ShellPart, words: readonly string[]): boolean {
  const texts = part.words.map((word) => word.text)
  if (matchesAt(texts, words, 0)) return true
  const first = texts[0]
  if (first === undefined || !WRAPPERS.has(first.slice(first.lastIndexOf('/') + 1))) return false
  for (let i = 1; i < texts.length; i++) if (matchesAt(texts, words, i)) return true
  return false
}

/** Whether `words` appear in a row anywhere in `tokens` (for a command that could not be parsed). */
export function tokensMention(tokens: readonly string[], words: readonly string[]): boolean {
  if (words.length === 0) return tokens.length > 0
  for (let i = 0; i + words.length <= tokens.length; i++) if (matchesAt(tokens, words, i)) return true
  return false
}

function matchesAt(texts: readonly (string | undefined)[], words: readonly string[], at: number): boolean {
  if (texts.length - at < words.length || texts.length === at) return false
  for (let i = 0; i < words.length; i++) {
    const text = texts[at + i]
    if (text === undefined) return false
    // The command itself may be named by its path: `/bin/rm` is `rm`.
    if (text !== words[i] && (i > 0 || text.slice(text.lastIndexOf('/') + 1) !== words[i])) return false
  }
  return true
}
