import type { Parser } from '@vscode/tree-sitter-wasm'
import { bashParser, type SyntaxNode } from './syntax'

/**
 * One word of a simple command. `text` is its value once bash has removed the
 * quoting (`r\m`, `'rm'` and `"rm"` are all `rm`), or undefined when bash
 * computes it at run time (a `$VAR`, a `$(…)`, `$'…'`). `expands` marks an
 * unquoted glob or brace character (`*`, `?`, `[`, `{`): bash may turn the
 * word into other words, such as the name of a file called `-delete`.
 */
export interface ShellWord {
  readonly text: string | undefined
  readonly expands: boolean
}

/**
 * One simple command of a command line: the unit that command rules and the
 * read-only list judge. `words[0]` is the command's name (empty `words` for a
 * bare assignment such as `X=1`); `assignments` says that variables are set
 * for it or by it (`PATH=/x git status` is not `git status`).
 */
export interface ShellPart {
  readonly words: readonly ShellWord[]
  readonly assignments: boolean
  /** The source text, for messages. */
  readonly text: string
}

/** A redirection that writes a file (`>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>& file`). */
export interface ShellWrite {
  readonly op: string
  /** The target's text when it is literal. */
  readonly target: string | undefined
  readonly text: string
}

/**
 * A command line as the permission checks see it. `parsed`: every simple
 * command anywhere in it (after `&&`, `||`, `;`, `|`, `&`, inside subshells,
 * groups, loops, conditionals, function bodies, `$(…)`, backticks, `<(…)`,
 * `>(…)`, heredocs, and inside the string of `bash -c`, `sh -c` and `eval`
 * when it is literal) and every redirection that writes a file. `unparsed`:
 * the parser found an error or a construct these checks do not model;
 * nothing may then be allowed by a command rule or the read-only list (fail
 * closed), and deny and ask rules look at `tokens`, a rough split of the text.
 */
export type ShellCommand =
  | { readonly kind: 'parsed'; readonly parts: readonly ShellPart[]; readonly writes: readonly ShellWrite[] }
  | { readonly kind: 'unparsed'; readonly reason: string; readonly tokens: readonly string[] }

/** The longest command line that is parsed; a longer one is `unparsed` (fail closed). */
export const MAX_COMMAND_CHARS = 64 * 1024

/** How deep `bash -c '…'` inside `bash -c '…'` is followed before giving up (unparsed). */
const MAX_NESTING = 3

/** Parses a command line (loads the grammar on first use). Never rejects: a failure is `unparsed`. */
export async function parseShellCommand(text: string): Promise<ShellCommand> {
  let parser: Parser
  try {
    parser = await bashParser()
  } catch (error) {
    return unparsed(`the shell parser could not be loaded (${error instanceof Error ? error.message : String(error)})`, text)
  }
  return analyze(parser, text, 0)
}

class Unsupported extends Error {}

function unparsed(reason: string, text: string): ShellCommand {
  return Object.freeze({ kind: 'unparsed', reason, tokens: Object.freeze(roughTokens(text)) })
}

function analyze(parser: Parser, text: string, depth: number): ShellCommand {
  if (text.length > MAX_COMMAND_CHARS) return unparsed(`the command is longer than ${MAX_COMMAND_CHARS} characters`, text)
  if (text.includes('\0')) return unparsed('the command contains a NUL character', text)
  const tree = parser.parse(text)
  if (!tree) return unparsed('the shell parser returned nothing', text)
  try {
    const root = tree.rootNode
    if (root.hasError) return unparsed('the command is not valid shell syntax (or uses syntax the parser does not know)', text)
    const found: { parts: ShellPart[]; writes: ShellWrite[] } = { parts: [], writes: [] }
    new Walker(parser, depth, found).node(root)
    return Object.freeze({ kind: 'parsed', parts: Object.freeze(found.parts), writes: Object.freeze(found.writes) })
  } catch (error) {
    if (error instanceof Unsupported) return unparsed(error.message, text)
    throw error
  } finally {
    tree.delete()
  }
}

/** Node types that only hold other nodes: their commands and redirections are looked for inside. */
const CONTAINERS = new Set([
  'program',
  'list',
  'pipeline',
  'subshell',
  'compound_statement',
  'redirected_statement',
  'negated_command',
  'do_group',
  'for_statement',
  'c_style_for_statement',
  'while_statement',
  'if_statement',
  'elif_clause',
  'else_clause',
  'case_statement',
  'case_item',
  'function_definition',
  'command_substitution',
  'process_substitution',
  'heredoc_redirect',
  'heredoc_body',
  'herestring_redirect',
  'string',
  'concatenation',
  'expansion',
  'arithmetic_expansion',
  'binary_expression',
  'unary_expression',
  'ternary_expression',
  'parenthesized_expression',
  'postfix_expression',
  'subscript',
  'array',
  'brace_expression',
  'variable_assignments',
])

/** Node types that hold no command: nothing inside them runs. */
const LEAVES = new Set([
  'word',
  'number',
  'raw_string',
  'string_content',
  'ansi_c_string',
  'translated_string',
  'simple_expansion',
  'variable_name',
  'special_variable_name',
  'heredoc_start',
  'heredoc_end',
  'heredoc_content',
  'file_descriptor',
  'test_operator',
  'comment',
  'regex',
  'extglob_pattern',
  'command_name',
])

/** Redirection operators that write the file they name. `>&` writes a file only when its target is not a descriptor. */
const WRITING_OPS = new Set(['>', '>>', '>|', '&>', '&>>', '<>', '>&'])
/** Targets that a write to is no write to the workspace. */
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr'])
/** Shells whose `-c` string is parsed as a command line of its own. */
const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh'])

class Walker {
  constructor(
    private readonly parser: Parser,
    private readonly depth: number,
    private readonly found: { parts: ShellPart[]; writes: ShellWrite[] },
  ) {}

  node(node: SyntaxNode): void {
    if (node.isError || node.isMissing) throw new Unsupported('the command is not valid shell syntax')
    if (!node.isNamed) return
    const type = node.type
    switch (type) {
      case 'command':
        return this.command(node)
      case 'declaration_command':
      case 'unset_command':
        return this.keywordCommand(node)
      case 'test_command':
        // `[[ … ]]` / `[ … ]` only tests; what it may run is in its substitutions.
        this.found.parts.push(Object.freeze({ words: Object.freeze([{ text: 'test', expands: false }]), assignments: false, text: node.text }))
        return this.children(node)
      case 'variable_assignment':
        this.found.parts.push(Object.freeze({ words: Object.freeze([]), assignments: true, text: node.text }))
        return this.children(node)
      case 'file_redirect':
        return this.redirect(node)
      default:
        if (CONTAINERS.has(type)) return this.children(node)
        if (LEAVES.has(type)) return this.children(node)
        throw new Unsupported(`the command uses shell syntax these checks do not model (${type})`)
    }
  }

  private children(node: SyntaxNode): void {
    for (const child of node.children) if (child) this.node(child)
  }

  private command(node: SyntaxNode): void {
    // The part keeps its place before the commands nested in its words: parts come in source order.
    const index = this.found.parts.length
    this.found.parts.push(undefined as never)
    const words: ShellWord[] = []
    let assignments = false
    for (const child of node.children) {
      if (!child || !child.isNamed) {
        if (child && (child.isError || child.isMissing)) throw new Unsupported('the command is not valid shell syntax')
        continue
      }
      if (child.type === 'variable_assignment' || child.type === 'variable_assignments') {
        assignments = true
        this.children(child)
      } else if (child.type === 'file_redirect' || child.type === 'herestring_redirect' || child.type === 'heredoc_redirect') {
        this.node(child)
      } else if (child.type === 'command_name') {
        const name = child.namedChildren[0]
        if (!name) throw new Unsupported('a command without a name')
        words.push(wordOf(name))
        this.node(name)
      } else {
        words.push(wordOf(child))
        this.node(child)
      }
    }
    this.found.parts[index] = Object.freeze({ words: Object.freeze(words), assignments, text: node.text })
    this.nested(words)
  }

  /** `export A=1 B`, `local x`, `unset y`: a part named by its keyword. */
  private keywordCommand(node: SyntaxNode): void {
    const keyword = node.children.find((child) => child && !child.isNamed)
    const words: ShellWord[] = [{ text: keyword?.text ?? node.type, expands: false }]
    for (const child of node.namedChildren) {
      if (!child) continue
      if (child.type === 'variable_assignment') {
        words.push({ text: child.text.includes('=') ? undefined : child.text, expands: false })
        this.children(child)
      } else {
        words.push(wordOf(child))
        this.node(child)
      }
    }
    this.found.parts.push(Object.freeze({ words: Object.freeze(words), assignments: false, text: node.text }))
  }

  private redirect(node: SyntaxNode): void {
    const op = node.children.find((child) => child && !child.isNamed)?.text ?? ''
    const named = node.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'file_descriptor')
    const destination = named[named.length - 1]
    for (const child of named) this.node(child)
    if (!WRITING_OPS.has(op) || !destination) return
    const target = wordOf(destination)
    // `>&2`, `2>&1`, `>&-` duplicate or close descriptors: nothing is written to a file.
    if (op === '>&' && (destination.type === 'number' || target.text === '-')) return
    if (target.text !== undefined && !target.expands && HARMLESS_TARGETS.has(target.text)) return
    this.found.writes.push(Object.freeze({ op, target: target.text, text: node.text }))
  }

  /** `bash -c 'cmd'`, `sh -c "cmd"`, `eval 'cmd'`: the string is a command line too, parsed when literal. */
  private nested(words: readonly ShellWord[]): void {
    const name = words[0]?.text
    if (name === undefined) return
    let inner: string | undefined
    if (name === 'eval') {
      if (words.slice(1).some((word) => word.text === undefined)) throw new Unsupported('eval of text computed at run time')
      inner = words
        .slice(1)
        .map((word) => word.text)
        .join(' ')
    } else if (SHELLS.has(basename(name))) {
      const flag = words.findIndex((word, index) => index > 0 && word.text !== undefined && /^-[a-z]*c[a-z]*$/.test(word.text))
      if (flag < 0) return
      const script = words[flag + 1]
      if (!script || script.text === undefined) throw new Unsupported(`${name} -c with a script computed at run time`)
      inner = script.text
    }
    if (inner === undefined) return
    if (this.depth + 1 > MAX_NESTING) throw new Unsupported('shells nested too deeply')
    const result = analyze(this.parser, inner, this.depth + 1)
    if (result.kind === 'unparsed') throw new Unsupported(`the script given to ${name}: ${result.reason}`)
    this.found.parts.push(...result.parts)
    this.found.writes.push(...result.writes)
  }
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1)
}

/** The value of a word node once bash removed the quoting, or undefined when it is computed at run time. */
function wordOf(node: SyntaxNode): ShellWord {
  switch (node.type) {
    case 'word': {
      const text = node.text
      return { text: unescapeUnquoted(text), expands: /(^|[^\\])[*?[]/.test(text) || BRACES.test(text) }
    }
    case 'number':
      return { text: node.text, expands: false }
    case 'raw_string':
      return { text: node.text.slice(1, -1), expands: false }
    case 'string': {
      let out = ''
      for (const child of node.namedChildren) {
        if (!child) continue
        if (child.type !== 'string_content') return { text: undefined, expands: false }
        out += unescapeDoubleQuoted(child.text)
      }
      return { text: out, expands: false }
    }
    case 'concatenation': {
      let out = ''
      let expands = false
      for (const child of node.namedChildren) {
        if (!child) continue
        const piece = wordOf(child)
        if (piece.text === undefined) return { text: undefined, expands: false }
        out += piece.text
        expands ||= piece.expands
      }
      // `{a,b}` is split into pieces by the grammar: the whole says whether bash expands it.
      return { text: out, expands: expands || BRACES.test(node.text) }
    }
    default:
      return { text: undefined, expands: false }
  }
}

/** An unquoted brace expansion (`{a,b}`, `{1..3}`); `{}` alone is literal. */
const BRACES = /\{[^}'"]*(,|\.\.)[^}'"]*\}/

/** `r\m` → `rm`; a backslash-newline disappears. */
function unescapeUnquoted(text: string): string {
  return text.replace(/\\(\n|.)/g, (_, char: string) => (char === '\n' ? '' : char))
}

/** Inside double quotes a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline. */
function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, char: string) => (char === '\n' ? '' : char))
}

/**
 * A rough split of a command line that could not be parsed: words between
 * blanks and shell operators, quotes removed. Only deny and ask rules look
 * at it (a rule then matches when its words appear anywhere in a row), so
 * a command that fails to parse is never less restricted than one that parses.
 */
export function roughTokens(text: string): string[] {
  return text
    .split(/[\s;&|()<>`$'"{}\\]+/)
    .filter((token) => token !== '')
}
