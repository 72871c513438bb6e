import type { Interface as ReadlineInterface } from 'node:readline'
import type { Style } from '../style'
import { LineWriter, Spinner } from '../terminal'
import { Screen, StatusSpinner, type ScreenStream } from './screen'
import type { TerminalInput } from './terminal-input'

/**
 * The interactive screen: everything goes to stdout. It knows whether the
 * last thing written waits for a line (the `> ` prompt or a question), so
 * that on a pipe, where nothing echoes the Enter, the next output starts on
 * a line of its own.
 *
 * On a terminal the output goes through a `Screen`: the prompt line stays
 * below the output (typing never splices into a streaming answer), the
 * spinner is a status line, and `answer` renders markdown (plain layout when
 * `NO_COLOR` is set). On a pipe `answer` is `out`: the model's text as it
 * came.
 */
export class Output {
  readonly out: LineWriter
  /** Where the model's answer goes: markdown rendered on a terminal, `out` otherwise. */
  readonly answer: LineWriter
  readonly spinner: Spinner | undefined
  /** The terminal's screen (undefined on a pipe). */
  readonly screen: Screen | undefined
  /** The last thing written is a prompt or a question, waiting for a line. */
  private waiting = false
  private rl: ReadlineInterface | undefined
  private input: TerminalInput | undefined

  constructor(
    stream: { write(text: string): unknown },
    readonly style: Style,
    readonly tty: boolean,
    private readonly redact: (text: string) => string,
    /** Draw a screen (false on a terminal that cannot move its cursor, `TERM=dumb`: lines as on a pipe, echoed by the terminal). */
    screen = tty,
  ) {
    if (screen) {
      this.screen = new Screen(stream as ScreenStream, style)
      this.out = this.screen.plain
      this.answer = this.screen.answer
      this.spinner = new StatusSpinner(this.screen, style)
    } else {
      this.out = new LineWriter(stream)
      this.answer = this.out
      this.spinner = undefined
    }
  }

  /** The readline interface that reads lines from a pipe. */
  attach(rl: ReadlineInterface): void {
    this.rl = rl
  }

  /** The keyboard of a terminal, which draws the prompt line. */
  attachInput(input: TerminalInput): void {
    this.input = input
  }

  /** Shows the `> ` prompt. */
  prompt(): void {
    this.out.newline()
    if (this.input) {
      this.input.show('> ')
      this.waiting = true
      return
    }
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
    if (this.input) {
      this.input.show(this.style('yellow', `${lines.length === 1 ? '? ' : ''}${last} ${choices} `))
      this.waiting = true
      return
    }
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

  /** Ends an open line (before the process exits); a terminal gets its keyboard back. */
  finish(): void {
    this.spinner?.stop()
    this.out.newline()
    this.input?.close()
    this.screen?.close()
  }
}
