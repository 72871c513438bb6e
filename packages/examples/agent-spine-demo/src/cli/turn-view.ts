import type { ContentBlock, TokenUsage } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, TurnEndReason } from '@deepseek-ai/dsh-session'
import type { Style } from './style'
import { formatUsage, sumUsage } from './usage'

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

export interface TurnViewOptions {
  /** Where the answer (text deltas) goes. */
  answer: LineWriter
  /** Where reasoning, tool activity and the turn summary go (may be `answer`). */
  notes: LineWriter
  style: Style
  /** Shown while a step waits for its first chunk; terminals only. */
  spinner?: Spinner
}

/**
 * Renders one agent's session events as they are appended: the answer
 * streams as it arrives, reasoning is dimmed, each tool call and each result
 * is one line, and every turn ends with a summary of its outcome and its
 * token usage (from the `usage` of the turn's `assistant/message` events).
 */
export class TurnView {
  /** How the last turn ended, once one has. */
  lastEnd: TurnEndReason | undefined
  private usages: (TokenUsage | undefined)[] = []
  private streaming: 'text' | 'reasoning' | undefined

  constructor(private readonly options: TurnViewOptions) {}

  onEvent(event: AnySessionEvent): void {
    const { answer, notes, style, spinner } = this.options
    switch (event.type) {
      case 'turn/start':
        this.usages = []
        this.streaming = undefined
        return
      case 'step/start':
        if (notes.atLineStart && answer.atLineStart) spinner?.start('waiting for the model…')
        return
      case 'assistant/chunk': {
        spinner?.stop()
        const chunk = event.data.chunk
        if (chunk.type === 'text-delta') {
          if (this.streaming === 'reasoning') notes.newline()
          this.streaming = 'text'
          answer.write(chunk.text)
        } else if (chunk.type === 'reasoning-delta') {
          if (this.streaming === 'text') answer.newline()
          this.streaming = 'reasoning'
          notes.write(style('dim', chunk.text))
        }
        return
      }
      case 'assistant/message':
        spinner?.stop()
        this.usages.push(event.data.usage)
        this.endBlock()
        return
      case 'tool/call':
        notes.line(style('cyan', `▸ ${event.data.name} ${clip(event.data.arguments, 100)}`))
        return
      case 'tool/result': {
        const block = event.data.message.content[0]
        const text = block?.type === 'tool-result' ? textOf(block.content) : ''
        const error = event.data.error
        notes.line(error ? style('red', `  ◂ ${error.code}: ${clip(error.message, 120)}`) : style('dim', `  ◂ ${summarize(text)}`))
        return
      }
      case 'steering/message':
        notes.line(style('yellow', `↪ steering: ${clip(textOf(event.data.message.content), 100)}`))
        return
      case 'llm/retry':
        notes.line(style('yellow', `· ${event.data.code}: retrying in ${event.data.delayMs} ms (attempt ${event.data.attempt})`))
        return
      case 'turn/end': {
        spinner?.stop()
        this.endBlock()
        this.lastEnd = event.data.reason
        const reason = event.data.reason
        const usage = formatUsage(sumUsage(this.usages))
        const head = `turn ${event.data.turn} ${describeEnd(reason)}`
        const color = reason.kind === 'error' || reason.kind === 'interrupted' ? 'red' : reason.kind === 'completed' ? 'dim' : 'yellow'
        notes.line(style(color, `· ${head} · ${usage}`))
        return
      }
      default:
        return
    }
  }

  /** Stops the spinner (before the process prints something else). */
  pause(): void {
    this.options.spinner?.stop()
  }

  private endBlock(): void {
    if (this.streaming === 'text') this.options.answer.newline()
    if (this.streaming === 'reasoning') this.options.notes.newline()
    this.streaming = undefined
  }
}

/** How a turn ended, in a few words. */
export function describeEnd(reason: TurnEndReason): string {
  switch (reason.kind) {
    case 'completed':
      return 'done'
    case 'aborted':
      return 'cancelled'
    case 'blocked':
      return 'blocked by a prompt policy'
    case 'stopped':
      return `stopped by ${reason.by}`
    case 'interrupted':
      return 'interrupted (the process ended mid-turn)'
    case 'error':
      return `failed: ${reason.failure.code}: ${reason.failure.message}`
    default:
      return (reason as { kind: string }).kind
  }
}

function textOf(content: readonly ContentBlock[]): string {
  let out = ''
  for (const block of content) if (block.type === 'text') out += block.text
  return out
}

/** A result in a few words: a one-line text as it is, otherwise its size. */
function summarize(text: string): string {
  if (text === '') return 'empty'
  const lines = text.split('\n').length
  return lines === 1 ? clip(text, 100) : `${lines} lines`
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}
