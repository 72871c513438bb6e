import { Lexer, type Token, type Tokens } from 'marked'
import type { Style } from '../style'
import { highlightLine } from './highlight'
import { visibleWidth } from './width'

/** What a rendered line is made with. */
export interface MarkdownOptions {
  /** Colors and attributes; the identity when colors are off (`NO_COLOR`): the layout stays. */
  style: Style
  /** The terminal's width in columns (rules and tables are fitted to it). */
  columns(): number
}

interface Fence {
  /** The fence's marker (three or more backticks or tildes); a closing fence repeats its character at least as often. */
  marker: string
  lang: string
  /** How far the fence was indented: its code lines lose as much. */
  indent: number
}

const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/
const QUOTE = /^ {0,3}>\s?(.*)$/
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/
const TABLE_ROW = /^\s*\|.*\|\s*$/

/**
 * Markdown for a terminal, rendered a line at a time as an answer streams:
 * `push` takes text as it arrives and returns the lines it completed,
 * rendered; `pending` is the raw text of the line still open (shown as it is
 * until its newline arrives); `end` renders what is left and resets the state
 * (a code fence left open ends with the answer).
 *
 * Rendering per line keeps the answer streaming; the price is that a
 * construct spanning lines is known only from what came before: code fences
 * and tables are tracked (a table is held until its last row, to align its
 * columns), a paragraph's soft line breaks stay line breaks, and a
 * multi-line comment or string in code is colored a line at a time.
 *
 * Headings are bold (level 1 and 2 also underlined), `**strong**` bold,
 * `*em*` italic, `` `code` `` cyan, links underlined with their address
 * after them, list bullets `•`, task boxes `☐`/`☑`, quotes behind a `│`,
 * rules a line of `─`, code blocks in a frame with their language and
 * highlighted (speed-highlight's grammars).
 */
export class MarkdownRenderer {
  private partial = ''
  private fence: Fence | undefined
  private table: string[] = []

  constructor(private readonly options: MarkdownOptions) {}

  /** Adds streamed text; returns the lines it completed, rendered (without newlines). */
  push(text: string): string[] {
    this.partial += text
    const out: string[] = []
    let newline = this.partial.indexOf('\n')
    while (newline >= 0) {
      out.push(...this.line(this.partial.slice(0, newline).replace(/\r$/, '')))
      this.partial = this.partial.slice(newline + 1)
      newline = this.partial.indexOf('\n')
    }
    return out
  }

  /** The raw text of the line still open (no newline yet). */
  pending(): string {
    return this.partial
  }

  /** Renders whatever is left (the open line, a held table, an open fence's frame) and starts afresh. */
  end(): string[] {
    const out = this.partial ? this.line(this.partial) : []
    this.partial = ''
    out.push(...this.flushTable())
    if (this.fence) out.push(this.frame('╰─'))
    this.fence = undefined
    return out
  }

  private line(raw: string): string[] {
    const { style } = this.options
    if (this.fence) {
      const close = FENCE.exec(raw)
      if (close && close[3] === '' && close[2]![0] === this.fence.marker[0] && close[2]!.length >= this.fence.marker.length) {
        this.fence = undefined
        return [this.frame('╰─')]
      }
      const code = raw.slice(Math.min(this.fence.indent, raw.length - raw.trimStart().length))
      return [`${this.frame('│')} ${highlightLine(code, this.fence.lang, style)}`]
    }
    if (TABLE_ROW.test(raw)) {
      this.table.push(raw)
      return []
    }
    const out = this.flushTable()
    const open = FENCE.exec(raw)
    if (open) {
      this.fence = { marker: open[2]!, lang: open[3]!, indent: open[1]!.length }
      out.push(this.frame(open[3] ? `╭─ ${open[3]}` : '╭─'))
      return out
    }
    out.push(this.block(raw))
    return out
  }

  /** One line outside code and tables. */
  private block(raw: string): string {
    const { style } = this.options
    const heading = HEADING.exec(raw)
    if (heading) {
      const text = this.inline(heading[2]!)
      return heading[1]!.length <= 2 ? style(['bold', 'underline'], text) : style('bold', text)
    }
    if (RULE.test(raw)) return style('dim', '─'.repeat(Math.min(40, this.options.columns())))
    const quote = QUOTE.exec(raw)
    if (quote) return `${style('dim', '│')} ${style('italic', this.inline(quote[1]!))}`
    const item = ITEM.exec(raw)
    if (item) {
      const [, indent, marker, rest] = item
      const task = /^\[([ xX])\]\s+(.*)$/.exec(rest!)
      const bullet = /\d/.test(marker!) ? marker! : '•'
      if (task) return `${indent}${bullet} ${task[1] === ' ' ? '☐' : '☑'} ${this.inline(task[2]!)}`
      return `${indent}${bullet} ${this.inline(rest!)}`
    }
    return this.inline(raw)
  }

  private frame(text: string): string {
    return this.options.style('dim', text)
  }

  /** Inline markdown (emphasis, code spans, links) of one line. */
  private inline(text: string): string {
    if (!/[*_`[~<&\\!]/.test(text)) return text
    try {
      return this.tokens(Lexer.lexInline(text))
    } catch {
      return text
    }
  }

  private tokens(tokens: readonly Token[]): string {
    const { style } = this.options
    let out = ''
    for (const token of tokens) {
      switch (token.type) {
        case 'strong':
          out += style('bold', this.children(token as Tokens.Strong))
          break
        case 'em':
          out += style('italic', this.children(token as Tokens.Em))
          break
        case 'del':
          out += style('strikethrough', this.children(token as Tokens.Del))
          break
        case 'codespan':
          out += style('cyan', decodeEntities((token as Tokens.Codespan).text))
          break
        case 'link': {
          const link = token as Tokens.Link
          const label = this.children(link)
          out += style('underline', label)
          if (link.href && link.href !== label && `mailto:${label}` !== link.href) out += style('dim', ` (${link.href})`)
          break
        }
        case 'image':
          out += style('dim', `[image: ${(token as Tokens.Image).text}]`)
          break
        case 'br':
          out += ' '
          break
        case 'escape':
          out += (token as Tokens.Escape).text
          break
        default: {
          const text = token as Tokens.Text
          out += text.tokens?.length ? this.tokens(text.tokens) : decodeEntities('text' in text ? text.text : token.raw)
        }
      }
    }
    return out
  }

  private children(token: { tokens?: Token[]; text: string }): string {
    return token.tokens ? this.tokens(token.tokens) : decodeEntities(token.text)
  }

  /** A held table, aligned in columns (rows that do not make a table are rendered as lines). */
  private flushTable(): string[] {
    if (this.table.length === 0) return []
    const rows = this.table
    this.table = []
    let token: Token | undefined
    try {
      token = new Lexer().lex(`${rows.join('\n')}\n`)[0]
    } catch {
      token = undefined
    }
    if (token?.type !== 'table') return rows.map((row) => this.inline(row))
    const table = token as Tokens.Table
    const { style } = this.options
    const cells = [table.header.map((cell) => style('bold', this.tokens(cell.tokens))), ...table.rows.map((row) => row.map((cell) => this.tokens(cell.tokens)))]
    const widths = table.header.map((_, column) => Math.max(...cells.map((row) => visibleWidth(row[column] ?? ''))))
    const pad = (text: string, column: number) => {
      const gap = widths[column]! - visibleWidth(text)
      const align = table.align[column]
      if (align === 'right') return ' '.repeat(gap) + text
      if (align === 'center') return ' '.repeat(Math.floor(gap / 2)) + text + ' '.repeat(Math.ceil(gap / 2))
      return text + ' '.repeat(gap)
    }
    const line = (row: string[]) => row.map((cell, column) => pad(cell, column)).join(style('dim', ' │ '))
    const rule = style('dim', widths.map((width) => '─'.repeat(width)).join('─┼─'))
    return [line(cells[0]!), rule, ...cells.slice(1).map(line)]
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' }

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name]!)
}
