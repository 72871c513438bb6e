/** A text stream that remembers whether the cursor is at the start of a line. */
export class LineWriter {
  atLineStart = true

  constructor(private readonly stream: { write(text: string): unknown }) {}

  write(text: string): void {
    if (!text) return
    this.stream.write(text)
    this.atLineStart = text.endsWith('\n')
  }

  /** Ends the current line, if one is open. */
  newline(): void {
    if (!this.atLineStart) this.write('\n')
  }

  /** Writes `text` as a line of its own. */
  line(text: string): void {
    this.newline()
    this.write(`${text}\n`)
  }
}

/** A one-line spinner on a terminal; it never writes into an open line. */
export class Spinner {
  private static readonly frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
  private timer: NodeJS.Timeout | undefined
  private frame = 0

  constructor(private readonly stream: { write(text: string): unknown }) {}

  start(label: string): void {
    if (this.timer) return
    const draw = () => this.stream.write(`\r${Spinner.frames[this.frame++ % Spinner.frames.length]} ${label}`)
    draw()
    this.timer = setInterval(draw, 80)
    this.timer.unref()
  }

  stop(): void {
    if (!this.timer) return
    clearInterval(this.timer)
    this.timer = undefined
    this.stream.write('\r\x1b[K')
  }
}
