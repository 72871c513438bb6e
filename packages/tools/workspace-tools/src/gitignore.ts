import { posix } from 'node:path'
import { compileGlob, type CompiledGlob } from './glob-pattern'

/** One line of a `.gitignore` file. */
interface IgnoreRule {
  /** `!pattern`: a match re-includes. */
  readonly negated: boolean
  /** `pattern/`: matches directories only. */
  readonly directoryOnly: boolean
  /** The pattern has a `/` before its end: it matches the path relative to the file's directory, not just a name. */
  readonly anchored: boolean
  readonly glob: CompiledGlob
}

/**
 * The rules of one ignore file, for the paths under `base` (a
 * workspace-relative directory, `''` for the root).
 *
 * Git's rules (gitignore(5)): blank lines and `#` comments are skipped;
 * unescaped trailing spaces are dropped; `!` negates; a trailing `/` matches
 * directories only; a pattern with another `/` is anchored to the file's
 * directory, one without matches a name at any depth; `**` spans
 * directories. Within a file the last matching rule decides. A pattern that
 * does not compile is skipped, as git skips it.
 */
export class IgnoreFile {
  private constructor(
    readonly base: string,
    private readonly rules: readonly IgnoreRule[],
  ) {}

  static parse(text: string, base: string): IgnoreFile {
    const rules: IgnoreRule[] = []
    for (const raw of text.split('\n')) {
      const rule = parseRule(raw.endsWith('\r') ? raw.slice(0, -1) : raw)
      if (rule) rules.push(rule)
    }
    return new IgnoreFile(base, rules)
  }

  get empty(): boolean {
    return this.rules.length === 0
  }

  /** Whether this file ignores (`true`), re-includes (`false`) or says nothing (`undefined`) about `path` (workspace-relative, under `base`). */
  decide(path: string, isDirectory: boolean): boolean | undefined {
    const relative = this.base === '' ? path : path.slice(this.base.length + 1)
    let name: string | undefined
    for (let i = this.rules.length - 1; i >= 0; i--) {
      const rule = this.rules[i]!
      if (rule.directoryOnly && !isDirectory) continue
      const subject = rule.anchored ? relative : (name ??= posix.basename(relative))
      if (rule.glob.matches(subject)) return !rule.negated
    }
    return undefined
  }
}

/**
 * Whether `path` is ignored by a stack of ignore files ordered from the
 * least to the most specific (`.git/info/exclude`, then the root's
 * `.gitignore`, then each directory's on the way down): the most specific
 * file that says something decides.
 */
export function isIgnored(stack: readonly IgnoreFile[], path: string, isDirectory: boolean): boolean {
  for (let i = stack.length - 1; i >= 0; i--) {
    const decision = stack[i]!.decide(path, isDirectory)
    if (decision !== undefined) return decision
  }
  return false
}

function parseRule(line: string): IgnoreRule | undefined {
  if (line === '' || line.startsWith('#')) return undefined
  let text = line
  // Trailing spaces are dropped unless escaped with a backslash.
  let end = text.length
  while (end > 0 && text[end - 1] === ' ' && text[end - 2] !== '\\') end--
  text = text.slice(0, end)
  let negated = false
  if (text.startsWith('!')) {
    negated = true
    text = text.slice(1)
  } else if (text.startsWith('\\!') || text.startsWith('\\#')) {
    text = text.slice(1)
  }
  let directoryOnly = false
  while (text.endsWith('/')) {
    directoryOnly = true
    text = text.slice(0, -1)
  }
  if (text === '') return undefined
  const anchored = text.includes('/')
  if (text.startsWith('/')) text = text.slice(1)
  try {
    return { negated, directoryOnly, anchored, glob: compileGlob(text, { braces: false }) }
  } catch {
    return undefined
  }
}
