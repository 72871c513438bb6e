import type { Interface as ReadlineInterface } from 'node:readline'
import type { Style } from '../style'
import { LineWriter, Spinner } from '../terminal'

/**
 * The interactive screen: everything goes to stdout. It knows whether the
 * last thing written waits for a line (the `> ` prompt or a question), so
 * that on a pipe, where nothing echoes the Enter, the next output starts on
 * a line of its own.
 */
export class Output {
  readonly out: LineWriter
  readonly spinner: Spinner | undefined
  /** The last thing written is a prompt or a question, waiting for a line. */
  private waiting = false
  private rl: ReadlineInterface | undefined

  constructor(
    stream: { write(text: string): unknown },
    readonly style: Style,
    readonly tty: boolean,
    private readonly redact: (text: string) => string,
  ) {
    this.out = new LineWriter(stream)
    this.spinner = tty ? new Spinner(stream) : undefined
  }

  /** The readline interface that draws the prompt on a terminal. */
  attach(rl: ReadlineInterface): void {
    this.rl = rl
  }

  /** Shows the `> ` prompt. */
  prompt(): void {
    this.out.newline()
    if (this.tty && this.rl) this.rl.prompt()
    else this.out.write('> ')
    this.out.atLineStart = false
    this.waiting = true
  }

  /**
   * Shows a question that waits for a line, with its choices:
   * `? allow write_file: write 5 bytes to notes.txt? [y]es / [n]o / [a]lways (write_file on notes.txt) `.
   * Lines after the first (a plan to approve) are printed before the choices.
   */
  ask(question: string, always?: string): void {
    this.spinner?.stop()
    this.out.newline()
    const choices = `[y]es / [n]o${always !== undefined ? ` / [a]lways (${always})` : ''}`
    const lines = this.redact(question).split('\n')
    lines.slice(0, -1).forEach((line, index) => this.out.line(this.style('yellow', index === 0 ? `? ${line}` : line)))
    const last = lines[lines.length - 1]!
    this.out.write(this.style('yellow', `${lines.length === 1 ? '? ' : ''}${last} ${choices} `))
    this.waiting = true
  }

  /** A line was entered: a terminal echoed its Enter; on a pipe, end the prompt's line. */
  entered(): void {
    if (this.tty) this.out.atLineStart = true
    else if (this.waiting) this.out.newline()
    this.waiting = false
  }

  /** A line of plain output. */
  line(text: string): void {
    this.spinner?.stop()
    this.out.line(text)
  }

  /** A line of a kind: `note` dimmed, `warn` yellow, `error` red; provider and tool text redacted. */
  say(kind: 'note' | 'warn' | 'error', text: string): void {
    this.line(this.style(kind === 'note' ? 'dim' : kind === 'warn' ? 'yellow' : 'red', this.redact(text)))
  }

  /** Ends an open line (before the process exits). */
  finish(): void {
    this.spinner?.stop()
    this.out.newline()
  }
}
