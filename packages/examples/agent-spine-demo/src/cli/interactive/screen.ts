import { MarkdownRenderer } from '../render/markdown'
import { visibleWidth } from '../render/width'
import type { Style } from '../style'
import { LineWriter, Spinner } from '../terminal'

/** The terminal the screen draws on. */
export interface ScreenStream {
  write(text: string): unknown
  /** Columns of the terminal (a TTY stream has them); 80 when unknown. */
  readonly columns?: number
}

/** The prompt line's content: its prompt and the text being edited. */
export interface EditorView {
  prompt: string
  text: string
  cursor: number
}

/**
 * The interactive screen on a terminal: output scrolls above a live area at
 * the bottom, which holds the output line still being written (an answer's
 * open line), a status (the spinner) and the prompt line with what the person
 * is typing. Each change erases the live area, writes the lines that are
 * complete, and draws the live area again, so text typed while an answer
 * streams stays on its own line and is never spliced into the answer; the
 * answer is never broken by the prompt either.
 *
 * Two writers feed it: `plain` (notes, tool lines, reasoning) and `answer`
 * (the model's text, rendered as markdown a line at a time). Switching from
 * one to the other ends the other's open line first.
 */
export class Screen {
  readonly plain: LineWriter
  readonly answer: LineWriter
  private partial = ''
  private partialKind: 'plain' | 'markdown' | undefined
  private status: string | undefined
  private editor: EditorView | undefined
  /** Rows from the top of the drawn live area to the row the cursor is on. */
  private cursorRow = 0
  private drawn = false
  /** An entered line waiting for the output's open line to end (so it never lands inside that line). */
  private echo = ''
  private readonly markdown: MarkdownRenderer

  constructor(
    private readonly stream: ScreenStream,
    style: Style,
  ) {
    this.markdown = new MarkdownRenderer({ style, columns: () => this.columns() })
    const screen = this
    this.plain = new (class extends LineWriter {
      override write(text: string): void {
        if (text) screen.writePlain(text)
      }
      override newline(): void {
        screen.endLine()
      }
    })(stream)
    this.answer = new (class extends LineWriter {
      override write(text: string): void {
        if (text) screen.writeMarkdown(text)
      }
      override newline(): void {
        screen.endLine()
      }
    })(stream)
  }

  /** Shows the prompt line (or replaces what it shows). */
  showEditor(view: EditorView): void {
    this.editor = { ...view }
    this.draw('')
  }

  /** Hides the prompt line. */
  hideEditor(): void {
    if (!this.editor) return
    this.editor = undefined
    this.draw('')
  }

  /**
   * Writes the prompt line as it stands into the output (what was entered
   * stays on screen, as on any terminal). While an output line is still open
   * (an answer streaming), it follows that line once it ends.
   */
  commitEditor(): void {
    const view = this.editor
    if (!view) return
    this.echo += `${editorLines(view).join('\n')}\n`
    this.draw('')
  }

  /** Sets the status line (undefined removes it). */
  setStatus(text: string | undefined): void {
    if (text === this.status) return
    this.status = text
    this.draw('')
  }

  /** Ends the screen: the open line is written out and the live area left as plain output. */
  close(): void {
    this.endLine()
    this.status = undefined
    this.editor = undefined
    this.draw('')
  }

  private columns(): number {
    return this.stream.columns && this.stream.columns > 0 ? this.stream.columns : 80
  }

  private sync(): void {
    const start = this.partial === ''
    this.plain.atLineStart = start
    this.answer.atLineStart = start
  }

  private writePlain(text: string): void {
    let out = this.partialKind === 'markdown' ? this.flushMarkdown() : ''
    const combined = this.partial + text
    const cut = combined.lastIndexOf('\n')
    if (cut >= 0) out += combined.slice(0, cut + 1)
    this.partial = combined.slice(cut + 1)
    this.partialKind = this.partial ? 'plain' : undefined
    this.draw(out)
  }

  private writeMarkdown(text: string): void {
    let out = ''
    if (this.partialKind === 'plain') {
      out += `${this.partial}\n`
      this.partial = ''
    }
    for (const line of this.markdown.push(text)) out += `${line}\n`
    this.partial = this.markdown.pending()
    this.partialKind = 'markdown'
    this.draw(out)
  }

  private flushMarkdown(): string {
    let out = ''
    for (const line of this.markdown.end()) out += `${line}\n`
    this.partial = ''
    this.partialKind = undefined
    return out
  }

  private endLine(): void {
    let out = ''
    if (this.partialKind === 'markdown') out = this.flushMarkdown()
    else if (this.partial) out = `${this.partial}\n`
    this.partial = ''
    this.partialKind = undefined
    this.draw(out)
  }

  /** Erases the live area, writes `committed` (whole lines) and draws the live area again. */
  private draw(committed: string): void {
    if (this.echo && this.partial === '') {
      committed += this.echo
      this.echo = ''
    }
    this.sync()
    const columns = this.columns()
    let out = ''
    if (this.drawn) out += `\r${this.cursorRow > 0 ? `\x1b[${this.cursorRow}A` : ''}\x1b[J`
    out += committed.replaceAll('\n', '\r\n')
    const lines: string[] = []
    if (this.partial) lines.push(this.partial)
    if (this.status) lines.push(this.status)
    let cursor: { row: number; column: number } | undefined
    let rows = 0
    let last = { row: 0, column: 0 }
    if (this.editor) {
      const editorRows = editorLines(this.editor)
      const before = lines.reduce((sum, line) => sum + rowsOf(line, columns), 0)
      const at = cursorOf(this.editor, columns)
      cursor = { row: before + at.row, column: at.column }
      lines.push(...editorRows)
    }
    for (const [index, line] of lines.entries()) {
      const end = endOf(line, columns)
      last = { row: rows + end.row, column: end.column }
      rows += rowsOf(line, columns)
      out += index === 0 ? line : `\r\n${line}`
    }
    this.drawn = lines.length > 0
    if (cursor && (cursor.row !== last.row || cursor.column !== last.column)) {
      if (last.row > cursor.row) out += `\x1b[${last.row - cursor.row}A`
      // After a full last row the cursor belongs on a row that is not there yet.
      else if (cursor.row > last.row) out += '\r\n'.repeat(cursor.row - last.row)
      out += `\x1b[${cursor.column + 1}G`
    }
    this.cursorRow = cursor ? cursor.row : last.row
    if (out) this.stream.write(out)
  }
}

/** The prompt line as screen lines: the prompt before the first, continuation lines indented under it. */
export function editorLines(view: EditorView): string[] {
  const indent = ' '.repeat(Math.min(visibleWidth(view.prompt), 4))
  return view.text.split('\n').map((line, index) => (index === 0 ? view.prompt + line : indent + line))
}

/** Row and column (0-based, within the editor's lines) of the cursor. */
function cursorOf(view: EditorView, columns: number): { row: number; column: number } {
  const before = editorLines({ ...view, text: view.text.slice(0, view.cursor) })
  const lines = editorLines(view)
  let row = 0
  for (let index = 0; index < before.length - 1; index++) row += rowsOf(lines[index]!, columns)
  const width = visibleWidth(before.at(-1)!)
  // A cursor right after a full row sits at the start of the next one.
  return { row: row + Math.floor(width / columns), column: width % columns }
}

/** Where the terminal's cursor is after writing `line`: a full last row leaves it on that row's last column. */
function endOf(line: string, columns: number): { row: number; column: number } {
  const width = visibleWidth(line)
  if (width === 0) return { row: 0, column: 0 }
  return { row: Math.floor((width - 1) / columns), column: ((width - 1) % columns) + 1 }
}

function rowsOf(line: string, columns: number): number {
  return Math.max(1, Math.ceil(visibleWidth(line) / columns))
}

/** The spinner of a terminal screen: a status line of the live area, so it never lands inside the output or the prompt. */
export class StatusSpinner extends Spinner {
  private static readonly FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
  private ticker: NodeJS.Timeout | undefined
  private tick = 0

  constructor(
    private readonly screen: Screen,
    private readonly style: Style,
  ) {
    super({ write: () => undefined })
  }

  override start(label: string): void {
    if (this.ticker) return
    const draw = () => this.screen.setStatus(this.style('dim', `${StatusSpinner.FRAMES[this.tick++ % StatusSpinner.FRAMES.length]} ${label}`))
    draw()
    this.ticker = setInterval(draw, 80)
    this.ticker.unref()
  }

  override stop(): void {
    if (!this.ticker) return
    clearInterval(this.ticker)
    this.ticker = undefined
    this.screen.setStatus(undefined)
  }
}
