/** A key as Node's keypress decoder (`readline.emitKeypressEvents`) reports it. */
export interface Key {
  name?: string
  sequence?: string
  ctrl?: boolean
  meta?: boolean
  shift?: boolean
}

/** What a key asks of the command line beyond editing. */
export type EditorAction = 'submit' | 'interrupt' | 'eof' | undefined

/**
 * The editing state of the prompt line on a terminal: the text (which may
 * hold newlines), the cursor, and the input history. It only edits; the
 * screen draws it (`screen.ts`) and the command line acts on `submit`,
 * `interrupt` (Ctrl-C) and `eof` (Ctrl-D on an empty line).
 *
 * Keys: Enter submits; a line ending in `\` continues on the next line
 * (the backslash becomes a newline), as do Alt-Enter and Ctrl-J; a bracketed
 * paste (the terminal marks it) keeps its newlines instead of submitting at
 * each. Up and Down walk the history (from the first or last line of a
 * multi-line text; elsewhere they move between its lines), keeping the
 * unsent draft. Left, Right, Home, End, Ctrl-A, Ctrl-E, Backspace, Delete,
 * Ctrl-U (to the start), Ctrl-K (to the end) and Ctrl-W (the word before)
 * edit as in a shell.
 */
export class LineEditor {
  text = ''
  cursor = 0
  private pasting = false
  private readonly history: string[]
  /** Where Up/Down is in the history (`history.length`: the draft). */
  private position: number
  private draft = ''

  constructor(
    history: readonly string[] = [],
    private readonly maxHistory = 500,
  ) {
    this.history = history.slice(-maxHistory)
    this.position = this.history.length
  }

  /** Applies one key. */
  key(input: string | undefined, key: Key = {}): EditorAction {
    const name = key.name
    if (name === 'paste-start') {
      this.pasting = true
      return undefined
    }
    if (name === 'paste-end') {
      this.pasting = false
      return undefined
    }
    if (this.pasting) {
      // Inside a paste every character is text; a line break is a newline, never a submit.
      if (name === 'return' || name === 'enter') this.insert('\n')
      else if (name === 'tab') this.insert('\t')
      else if (input && !/[\x00-\x08\x0b-\x1f\x7f]/.test(input)) this.insert(input.replace(/\r\n?/g, '\n'))
      return undefined
    }
    if (key.ctrl && !key.meta) {
      switch (name) {
        case 'c':
          return 'interrupt'
        case 'd':
          if (this.text === '') return 'eof'
          this.deleteForward()
          return undefined
        case 'a':
          this.cursor = this.lineStart()
          return undefined
        case 'e':
          this.cursor = this.lineEnd()
          return undefined
        case 'u':
          this.text = this.text.slice(0, this.lineStart()) + this.text.slice(this.cursor)
          this.cursor = this.lineStart()
          return undefined
        case 'k':
          this.text = this.text.slice(0, this.cursor) + this.text.slice(this.lineEnd())
          return undefined
        case 'w': {
          const before = this.text.slice(0, this.cursor).replace(/\S+\s*$/, '')
          this.text = before + this.text.slice(this.cursor)
          this.cursor = before.length
          return undefined
        }
        case 'b':
          return this.move(-1)
        case 'f':
          return this.move(1)
        case 'h':
          return this.backspace()
        case 'j':
          this.insert('\n')
          return undefined
        default:
          return undefined
      }
    }
    switch (name) {
      case 'return':
        if (key.meta) {
          this.insert('\n')
          return undefined
        }
        if (this.text.slice(0, this.cursor).endsWith('\\') && this.cursor === this.text.length) {
          this.text = `${this.text.slice(0, -1)}\n`
          this.cursor = this.text.length
          return undefined
        }
        return 'submit'
      case 'enter':
        this.insert('\n')
        return undefined
      case 'backspace':
        return this.backspace()
      case 'delete':
        this.deleteForward()
        return undefined
      case 'left':
        return this.move(-1)
      case 'right':
        return this.move(1)
      case 'home':
        this.cursor = this.lineStart()
        return undefined
      case 'end':
        this.cursor = this.lineEnd()
        return undefined
      case 'up':
        return this.vertical(-1)
      case 'down':
        return this.vertical(1)
      case 'escape':
      case 'tab':
        return undefined
      default:
        if (input && !key.meta && !/[\x00-\x1f\x7f]/.test(input)) this.insert(input)
        return undefined
    }
  }

  /**
   * The text to send: returns it and clears the line. A text that is not
   * blank joins the history (unless it repeats the last entry).
   */
  take(): string {
    const text = this.text
    this.text = ''
    this.cursor = 0
    this.draft = ''
    if (text.trim() && this.history.at(-1) !== text) {
      this.history.push(text)
      if (this.history.length > this.maxHistory) this.history.shift()
    }
    this.position = this.history.length
    return text
  }

  /** Clears the line (Ctrl-C), keeping the history. */
  clear(): void {
    this.text = ''
    this.cursor = 0
    this.position = this.history.length
  }

  /** Adds `entries` (oldest first) as the most recent history, e.g. the prompts of a session just resumed. */
  remember(entries: readonly string[]): void {
    for (const entry of entries) {
      if (!entry.trim() || this.history.at(-1) === entry) continue
      this.history.push(entry)
      if (this.history.length > this.maxHistory) this.history.shift()
    }
    this.position = this.history.length
    this.draft = ''
  }

  /** The history, oldest first. */
  entries(): readonly string[] {
    return this.history
  }

  private insert(text: string): void {
    this.text = this.text.slice(0, this.cursor) + text + this.text.slice(this.cursor)
    this.cursor += text.length
  }

  private backspace(): undefined {
    if (this.cursor === 0) return undefined
    const step = this.charBefore()
    this.text = this.text.slice(0, this.cursor - step) + this.text.slice(this.cursor)
    this.cursor -= step
    return undefined
  }

  private deleteForward(): void {
    if (this.cursor >= this.text.length) return
    const step = this.text.codePointAt(this.cursor)! > 0xffff ? 2 : 1
    this.text = this.text.slice(0, this.cursor) + this.text.slice(this.cursor + step)
  }

  private move(direction: -1 | 1): undefined {
    if (direction < 0) this.cursor -= this.cursor > 0 ? this.charBefore() : 0
    else if (this.cursor < this.text.length) this.cursor += this.text.codePointAt(this.cursor)! > 0xffff ? 2 : 1
    return undefined
  }

  /** UTF-16 units of the character before the cursor (a surrogate pair is one character). */
  private charBefore(): number {
    const low = this.text.charCodeAt(this.cursor - 1)
    return low >= 0xdc00 && low <= 0xdfff && this.cursor >= 2 ? 2 : 1
  }

  private lineStart(): number {
    return this.text.lastIndexOf('\n', this.cursor - 1) + 1
  }

  private lineEnd(): number {
    const end = this.text.indexOf('\n', this.cursor)
    return end < 0 ? this.text.length : end
  }

  /** Up/Down: between the lines of a multi-line text, else through the history. */
  private vertical(direction: -1 | 1): undefined {
    const start = this.lineStart()
    const onFirst = start === 0
    const onLast = this.lineEnd() === this.text.length
    if ((direction < 0 && !onFirst) || (direction > 0 && !onLast)) {
      const column = this.cursor - start
      if (direction < 0) {
        const previousStart = this.text.lastIndexOf('\n', start - 2) + 1
        this.cursor = Math.min(previousStart + column, start - 1)
      } else {
        const nextStart = this.lineEnd() + 1
        const nextEnd = this.text.indexOf('\n', nextStart)
        this.cursor = Math.min(nextStart + column, nextEnd < 0 ? this.text.length : nextEnd)
      }
      return undefined
    }
    const target = this.position + direction
    if (target < 0 || target > this.history.length) return undefined
    if (this.position === this.history.length) this.draft = this.text
    this.position = target
    this.text = target === this.history.length ? this.draft : this.history[target]!
    this.cursor = this.text.length
    return undefined
  }
}
