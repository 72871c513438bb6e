import { emitKeypressEvents } from 'node:readline'
import { LineEditor, type Key } from './line-editor'
import type { Screen } from './screen'

/** What the terminal input reports. */
export interface InputHandlers {
  /** A line (or a multi-line message) was entered. */
  line(text: string): void
  /** Ctrl-C. */
  interrupt(): void
  /** Ctrl-D on an empty line: the end of input. */
  end(): void
  /**
   * The terminal's input stream ended or failed: the terminal was closed (a
   * keyboard's Ctrl-D is a key, not the end of the stream). SIGHUP usually
   * follows, but the stream's end can come first.
   */
  gone(): void
}

/** The terminal's input stream, in raw mode while the command line runs. */
export interface RawInput extends NodeJS.EventEmitter {
  setRawMode?(mode: boolean): unknown
  resume(): unknown
  pause(): unknown
  readonly isRaw?: boolean
}

/** Enables the terminal's bracketed paste (a paste arrives marked, its newlines are not Enter presses). */
const PASTE_ON = '\x1b[?2004h'
const PASTE_OFF = '\x1b[?2004l'

/**
 * The keyboard of the interactive command line on a terminal: keys come from
 * Node's keypress decoder (`readline.emitKeypressEvents`, which also names
 * the bracketed paste markers), go to a `LineEditor`, and the prompt line is
 * drawn by the `Screen` below the output. An entered line stays on screen as
 * it was typed (prompt included), then the prompt comes back empty. Ctrl-C
 * on a line with text clears it; on an empty line it is the command line's
 * Ctrl-C (cancel the turn, exit).
 */
export class TerminalInput {
  readonly editor: LineEditor
  private prompt = '> '
  private shown = false
  private closed = false
  /** A redraw is scheduled: the keys of one chunk of input (typing fast, a paste) are drawn once. */
  private scheduled = false

  constructor(
    private readonly stdin: RawInput,
    private readonly stdout: { write(text: string): unknown },
    private readonly screen: Screen,
    history: readonly string[],
    private readonly handlers: InputHandlers,
  ) {
    this.editor = new LineEditor(history)
  }

  /** Starts reading keys (raw mode, bracketed paste on). */
  start(): void {
    emitKeypressEvents(this.stdin as NodeJS.ReadableStream)
    this.stdin.setRawMode?.(true)
    this.stdin.on('keypress', this.onKey)
    // The error listener stays after close(): an unheard EIO from a closed terminal would crash the process.
    this.stdin.once('end', this.onGone)
    this.stdin.on('error', this.onGone)
    this.stdin.resume()
    this.stdout.write(PASTE_ON)
  }

  /** Shows the prompt line with `prompt` (`> `, or a question waiting for its answer). */
  show(prompt: string): void {
    if (this.closed) return
    this.prompt = prompt
    this.shown = true
    this.draw()
  }

  /** Stops reading keys and gives the terminal back as it was. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.stdin.off('keypress', this.onKey)
    if (this.stdin.isRaw) this.stdin.setRawMode?.(false)
    this.stdin.pause()
    this.screen.close()
    this.stdout.write(PASTE_OFF)
  }

  private draw(): void {
    this.scheduled = false
    if (this.shown && !this.closed) this.screen.showEditor({ prompt: this.prompt, text: this.editor.text, cursor: this.editor.cursor })
  }

  private scheduleDraw(): void {
    if (this.scheduled) return
    this.scheduled = true
    queueMicrotask(() => {
      if (this.scheduled) this.draw()
    })
  }

  private gone = false
  private readonly onGone = () => {
    if (this.gone) return
    this.gone = true
    this.handlers.gone()
  }

  private readonly onKey = (input: string | undefined, key: Key | undefined) => {
    if (this.closed) return
    const action = this.editor.key(input, key ?? {})
    if (action === 'submit') {
      this.draw()
      this.screen.commitEditor()
      const text = this.editor.take()
      // The question (if one was shown) is answered; the next prompt is the ordinary one.
      this.prompt = '> '
      this.draw()
      return this.handlers.line(text)
    }
    if (action === 'interrupt') {
      // With text on the prompt line, Ctrl-C only clears it (as a shell does); on an empty line it interrupts.
      const typed = this.editor.text !== ''
      this.editor.clear()
      this.draw()
      if (!typed) this.handlers.interrupt()
      return
    }
    if (action === 'eof') return this.handlers.end()
    this.scheduleDraw()
  }
}
