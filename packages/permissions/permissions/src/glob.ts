import { RE2JS } from 're2js'

/**
 * A compiled glob. Globs are compiled to RE2 (linear time whatever the
 * pattern or the text), because the text they are matched against (a path,
 * a tool name) comes from the model.
 *
 * Syntax: `*` any run of characters but `/`; `**` as a whole path segment
 * any number of directories (`src/**` is everything under `src`, `**\/x.ts`
 * an `x.ts` anywhere); `?` one character but `/`; `[abc]`, `[a-z]`, `[!a]`
 * a class; `{a,b}` alternatives; `\x` the character x. Tool-name globs have
 * no `/`, so there `*` is any run of characters.
 */
export interface Glob {
  readonly source: string
  matches(text: string): boolean
}

const cache = new Map<string, Glob>()

/** Compiles `glob` (cached); throws an `Error` naming the problem when it is malformed. */
export function compileGlob(glob: string): Glob {
  let compiled = cache.get(glob)
  if (!compiled) {
    let pattern: RE2JS
    try {
      pattern = RE2JS.compile(translate(glob))
    } catch (error) {
      throw new Error(`the glob ${JSON.stringify(glob)} is not valid (${error instanceof Error ? error.message : String(error)})`)
    }
    compiled = Object.freeze({ source: glob, matches: (text: string) => pattern.testExact(text) })
    if (cache.size > 1000) cache.clear()
    cache.set(glob, compiled)
  }
  return compiled
}

/** Whether a glob has any wildcard (a plain name is compared as it is). */
export function isPlain(glob: string): boolean {
  return !/[*?[{\\]/.test(glob)
}

function translate(glob: string): string {
  let out = ''
  let depth = 0
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!
    const atSegmentStart = i === 0 || glob[i - 1] === '/'
    if (char === '*' && glob[i + 1] === '*' && atSegmentStart && (i + 2 === glob.length || glob[i + 2] === '/')) {
      // `**` alone in its segment: any number of directories.
      if (i + 2 === glob.length) {
        out += '.*'
        i += 1
      } else {
        out += '(?:.*/)?'
        i += 2
      }
    } else if (char === '*') {
      while (glob[i + 1] === '*') i++
      out += '[^/]*'
    } else if (char === '?') {
      out += '[^/]'
    } else if (char === '[') {
      const end = glob.indexOf(']', i + 2)
      if (end < 0) {
        out += '\\['
        continue
      }
      let body = glob.slice(i + 1, end)
      const negated = body.startsWith('!') || body.startsWith('^')
      if (negated) body = body.slice(1)
      out += `[${negated ? '^/' : ''}${body.replace(/[\\\]^]/g, (c) => `\\${c}`)}]`
      i = end
    } else if (char === '{') {
      depth++
      out += '(?:'
    } else if (char === '}' && depth > 0) {
      depth--
      out += ')'
    } else if (char === ',' && depth > 0) {
      out += '|'
    } else if (char === '\\' && i + 1 < glob.length) {
      out += escape(glob[++i]!)
    } else {
      out += escape(char)
    }
  }
  if (depth > 0) throw new Error('an unclosed {')
  return out
}

function escape(char: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(char) ? `\\${char}` : char
}
