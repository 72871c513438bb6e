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
 * `xargs`, `nice -n 5`, …), anywhere after that. After the first word,
 * options and the word after an option may come between the rule's words
 * (`git -c x=y push` and `git -C dir push` are `git push`). Erring towards a
 * match is the safe side for a denial.
 */
export function mentions(part: ShellPart, words: readonly string[]): boolean {
  const texts = part.words.map((word) => word.text)
  if (appearsAt(texts, words, 0)) return true
  const first = texts[0]
  if (first === undefined || !WRAPPERS.has(first.slice(first.lastIndexOf('/') + 1))) return false
  for (let i = 1; i < texts.length; i++) if (appearsAt(texts, words, i)) return true
  return false
}

/** Whether `words` appear in `tokens` (for a command that could not be parsed), as `mentions` reads a part, from any token. */
export function tokensMention(tokens: readonly string[], words: readonly string[]): boolean {
  if (words.length === 0) return tokens.length > 0
  for (let i = 0; i + words.length <= tokens.length; i++) if (appearsAt(tokens, words, i)) return true
  return false
}

/**
 * Whether `texts[at]` is the command `words[0]` (also named by its path:
 * `/bin/rm` is `rm`) and the other words follow in order, with only options
 * (`-x`, `--name`, `--name=value`, or a word computed at run time, which
 * could be one) and the word right after an option (its argument, maybe)
 * between them.
 */
function appearsAt(texts: readonly (string | undefined)[], words: readonly string[], at: number): boolean {
  const name = texts[at]
  if (words.length === 0 || name === undefined || (name !== words[0] && name.slice(name.lastIndexOf('/') + 1) !== words[0])) return false
  const tried = new Set<string>()
  const follows = (word: number, from: number, afterOption: boolean): boolean => {
    if (word === words.length) return true
    const key = `${word} ${from} ${afterOption}`
    if (tried.has(key)) return false
    tried.add(key)
    for (let i = from, previousIsOption = afterOption; i < texts.length; i++) {
      const text = texts[i]
      if (text === words[word] && follows(word + 1, i + 1, false)) return true
      const option = text === undefined || (text.length > 1 && text.startsWith('-'))
      // Only an option, or the word right after one, may be passed over.
      if (!option && !previousIsOption) return false
      previousIsOption = option && (text === undefined || !text.includes('='))
    }
    return false
  }
  return follows(1, at + 1, false)
}
