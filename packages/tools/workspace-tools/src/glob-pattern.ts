import { RE2JS } from 're2js'
import { workspaceError } from './errors'

/**
 * Globs, compiled to RE2 (a linear-time engine) rather than to JavaScript
 * regular expressions: a glob such as `*a*a*a*a*a*b` compiled for a
 * backtracking engine takes time exponential in its stars on a long name,
 * and globs come from the model (`glob`, `grep`'s filter) and from
 * `.gitignore` files of whatever repository the workspace holds.
 *
 * Syntax, matched against a whole `/`-separated path: `*` any run of
 * characters but `/`; `?` one such character; `[abc]`, `[a-z]`, `[!a]` /
 * `[^a]` a class (never `/`); `**` as a whole segment any number of
 * directories (`**` + `/` at the start or middle, `/` + `**` at the end); `\x` the character x;
 * with `braces`, `{a,b}` alternatives (nested allowed). Any other character
 * is itself.
 */
export interface CompiledGlob {
  /** Whether the whole of `path` matches. */
  matches(path: string): boolean
}

/** Compiles a glob; throws `INVALID_PATTERN` naming the problem. */
export function compileGlob(glob: string, options: { braces: boolean }): CompiledGlob {
  let pattern: RE2JS
  try {
    pattern = RE2JS.compile(globSource(glob, options.braces))
  } catch (error) {
    throw workspaceError('INVALID_PATTERN', `the glob ${JSON.stringify(glob)} is not valid (${reasonOf(error)})`, error)
  }
  return { matches: (path) => pattern.testExact(path) }
}

/** The RE2 source of a glob (unanchored: the caller matches it against the whole path). */
export function globSource(glob: string, braces: boolean): string {
  let out = ''
  let i = 0
  while (i < glob.length) {
    const char = glob[i]!
    const segmentStart = i === 0 || glob[i - 1] === '/'
    if (char === '*' && glob[i + 1] === '*' && segmentStart && (i + 2 === glob.length || glob[i + 2] === '/')) {
      if (i + 2 === glob.length) {
        out += '.*'
        i += 2
      } else {
        out += '(?:.*/)?'
        i += 3
      }
    } else if (char === '*') {
      while (glob[i] === '*') i++
      out += '[^/]*'
    } else if (char === '?') {
      out += '[^/]'
      i++
    } else if (char === '[') {
      const klass = characterClass(glob, i)
      if (klass) {
        out += klass.source
        i = klass.end
      } else {
        out += literal('[')
        i++
      }
    } else if (char === '{' && braces) {
      const group = braceGroup(glob, i)
      if (group) {
        out += `(?:${group.alternatives.map((alternative) => globSource(alternative, true)).join('|')})`
        i = group.end
      } else {
        out += literal('{')
        i++
      }
    } else if (char === '\\' && i + 1 < glob.length) {
      out += literal(glob[i + 1]!)
      i += 2
    } else {
      const codePoint = glob.codePointAt(i)!
      out += literal(String.fromCodePoint(codePoint))
      i += codePoint > 0xffff ? 2 : 1
    }
  }
  return out
}

/** A `[...]` class starting at `start`, or undefined when it has no closing `]` (then `[` is literal). */
function characterClass(glob: string, start: number): { source: string; end: number } | undefined {
  let i = start + 1
  let negated = false
  if (glob[i] === '!' || glob[i] === '^') {
    negated = true
    i++
  }
  const items: string[] = []
  let first = true
  while (i < glob.length) {
    let char = glob[i]!
    if (char === ']' && !first) {
      const body = items.join('')
      return { source: negated ? `[^/${body}]` : `[${body}]`, end: i + 1 }
    }
    first = false
    if (char === '\\' && i + 1 < glob.length) {
      i++
      char = glob[i]!
    }
    const codePoint = glob.codePointAt(i)!
    i += codePoint > 0xffff ? 2 : 1
    if (glob[i] === '-' && i + 1 < glob.length && glob[i + 1] !== ']') {
      let j = i + 1
      if (glob[j] === '\\' && j + 1 < glob.length) j++
      const upper = glob.codePointAt(j)!
      items.push(`${hex(codePoint)}-${hex(upper)}`)
      i = j + (upper > 0xffff ? 2 : 1)
    } else {
      items.push(hex(codePoint))
    }
  }
  return undefined
}

/** A `{a,b}` group starting at `start` (nesting respected), or undefined without a closing `}` or a top-level comma. */
function braceGroup(glob: string, start: number): { alternatives: string[]; end: number } | undefined {
  let depth = 0
  let from = start + 1
  const alternatives: string[] = []
  for (let i = start; i < glob.length; i++) {
    const char = glob[i]
    if (char === '\\') {
      i++
    } else if (char === '{') {
      depth++
    } else if (char === '}') {
      depth--
      if (depth === 0) {
        if (alternatives.length === 0) return undefined
        alternatives.push(glob.slice(from, i))
        return { alternatives, end: i + 1 }
      }
    } else if (char === ',' && depth === 1) {
      alternatives.push(glob.slice(from, i))
      from = i + 1
    }
  }
  return undefined
}

function hex(codePoint: number): string {
  return `\\x{${codePoint.toString(16)}}`
}

function literal(char: string): string {
  return /^[\p{L}\p{N}_/ ]$/u.test(char) ? char : hex(char.codePointAt(0)!)
}

/** The parser's own words, without the stack. */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.replace(/^error parsing regexp: /, '')
}
