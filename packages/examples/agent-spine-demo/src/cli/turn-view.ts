import type {} from '@deepseek-ai/dsh-compaction'
import type { TokenUsage } from '@deepseek-ai/dsh-llm'
import '@deepseek-ai/dsh-permissions'
import type { AnySessionEvent, SessionEventMap, TurnEndReason } from '@deepseek-ai/dsh-session'
import { compactionLine } from './compaction-lines'
import type { Style } from './style'
import type { LineWriter, Spinner } from './terminal'
import { clip, summarize, textOf } from './text'
import { ToolLines, resultCallId } from './tool-lines'
import { formatUsage, sumUsage } from './usage'

export { LineWriter, Spinner } from './terminal'

export interface TurnViewOptions {
  /** Where the answer (text deltas) goes. */
  answer: LineWriter
  /** Where reasoning, tool activity and the turn summary go (may be `answer`). */
  notes: LineWriter
  style: Style
  /** Shown while a step waits for its first chunk; terminals only. */
  spinner?: Spinner
  /**
   * `stream` (default): text is written as it arrives. `final` (`-p`): each
   * step's text is held until the step is known to have succeeded, and only
   * the last successful answer reaches `answer`, at the turn's end; the text
   * of a step that called tools, or that the turn went on after, goes to
   * `notes`, and the partial text of a failed (retried) step is dropped, with
   * a note. So `answer` carries exactly one answer, never a retried attempt.
   */
  answerMode?: 'stream' | 'final'
  /** Applied to every note built from provider or tool text (error messages). */
  redact?: (text: string) => string
  /** A few words appended to each turn's summary line (the permission mode when it is not the default), or undefined. */
  status?: () => string | undefined
}

/**
 * Renders one agent's session events as they are appended: the answer
 * streams as it arrives (or is held, see `answerMode`), reasoning is dimmed,
 * each tool call and each result is one line (results named by their call
 * when they do not follow it directly), a retried step says what failed, and
 * every turn ends with a summary of its outcome and its token usage (from the
 * `usage` of the turn's `assistant/message` events).
 */
export class TurnView {
  /** How the last turn ended, once one has. */
  lastEnd: TurnEndReason | undefined
  private usages: (TokenUsage | undefined)[] = []
  private streaming: 'text' | 'reasoning' | undefined
  private readonly tools = new ToolLines()
  /** `final` mode: the text of the open step. */
  private stepText = ''
  /** `final` mode: the text of the last step that succeeded without calling tools. */
  private answerText = ''
  /** `final` mode: characters of a failed step's text that were dropped, for the retry note. */
  private dropped = 0
  /** The open turn only records injected messages. */
  private injection = false
  /** The compaction that started last, for the line its outcome prints. */
  private compaction: SessionEventMap['compaction/start'] | undefined

  constructor(private readonly options: TurnViewOptions) {}

  private get final(): boolean {
    return this.options.answerMode === 'final'
  }

  onEvent(event: AnySessionEvent): void {
    const { answer, notes, style, spinner } = this.options
    switch (event.type) {
      case 'turn/start':
        // A one-shot injection turn (a mode change told to the model) has no step: it gets no summary line.
        this.injection = event.data.trigger.kind === 'injection'
        this.usages = []
        this.streaming = undefined
        this.stepText = this.answerText = ''
        this.dropped = 0
        return
      case 'step/start':
        // The turn went on after a step that answered: that answer was not the last one.
        if (this.answerText) this.note(this.answerText)
        this.answerText = ''
        if (notes.atLineStart && answer.atLineStart) spinner?.start('waiting for the model…')
        return
      case 'assistant/chunk': {
        spinner?.stop()
        const chunk = event.data.chunk
        if (chunk.type === 'text-delta') {
          if (this.final) {
            this.stepText += chunk.text
            return
          }
          if (this.streaming === 'reasoning') notes.newline()
          this.streaming = 'text'
          answer.write(chunk.text)
          this.tools.interrupted()
        } else if (chunk.type === 'reasoning-delta') {
          if (this.streaming === 'text') answer.newline()
          this.streaming = 'reasoning'
          notes.write(style('dim', chunk.text))
          this.tools.interrupted()
        }
        return
      }
      case 'assistant/message':
        spinner?.stop()
        this.usages.push(event.data.usage)
        this.endBlock()
        if (this.final) this.settleStep(event.data)
        return
      case 'tool/call':
        notes.line(style('cyan', this.tools.call(event.data)))
        return
      case 'tool/result': {
        const block = event.data.message.content[0]
        const text = block?.type === 'tool-result' ? textOf(block.content) : ''
        const error = event.data.error
        const label = this.tools.resultLabel(resultCallId(event.data))
        notes.line(
          error
            ? style('red', `  ◂ ${label}${error.code}: ${clip(this.redact(error.message), 120)}`)
            : style('dim', `  ◂ ${label}${summarize(text)}`),
        )
        return
      }
      case 'steering/message':
        this.line(style('yellow', `↪ steering: ${clip(textOf(event.data.message.content), 100)}`))
        return
      case 'llm/retry':
        this.line(style('yellow', this.retryNote(event.data)))
        return
      case 'compaction/start':
        this.compaction = event.data
        return
      case 'compaction/summary':
      case 'compaction/prune':
      case 'compaction/failed':
        spinner?.stop()
        this.line(style(event.type !== 'compaction/failed' ? 'magenta' : event.data.code === 'NOT_SMALLER' ? 'dim' : 'yellow', compactionLine(this.compaction, event.type, event.data)))
        this.compaction = undefined
        return
      case 'permission/mode':
        this.line(style('yellow', `· permission mode ${event.data.previous} → ${event.data.mode}${MODE_CAUSES[event.data.cause] ?? ''}`))
        return
      case 'turn/end': {
        spinner?.stop()
        if (this.injection) return
        this.endBlock()
        if (this.answerText) answer.line(this.answerText.replace(/\n+$/, ''))
        this.stepText = this.answerText = ''
        this.lastEnd = event.data.reason
        const reason = event.data.reason
        const usage = formatUsage(sumUsage(this.usages))
        const head = `turn ${event.data.turn} ${this.redact(describeEnd(reason))}`
        const color = reason.kind === 'error' || reason.kind === 'interrupted' ? 'red' : reason.kind === 'completed' ? 'dim' : 'yellow'
        const status = this.options.status?.()
        this.line(style(color, `· ${head} · ${usage}${status ? ` · ${status}` : ''}`))
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

  /** `final` mode: what becomes of a finished step's text. */
  private settleStep(data: SessionEventMap['assistant/message']): void {
    const text = this.stepText
    this.stepText = ''
    const failed = data.finishReason.kind === 'error' || data.interrupted === true
    if (failed) this.dropped = text.length
    else if (data.message.content.some((block) => block.type === 'tool-call')) this.note(text)
    else this.answerText = text
  }

  private retryNote(data: { turn: number; step: number; code: string; attempt: number; delayMs: number; message: string }): string {
    const dropped = this.dropped ? `; its partial answer (${this.dropped} characters) was discarded` : ''
    this.dropped = 0
    return `· step ${data.turn}.${data.step} failed: ${data.code}: ${clip(this.redact(data.message), 160)} · retry ${data.attempt} in ${data.delayMs} ms${dropped}`
  }

  /** Text that was an answer of the model but not the final one: a note, on a line of its own. */
  private note(text: string): void {
    if (text.trim()) this.line(text.replace(/\n+$/, ''))
  }

  private line(text: string): void {
    this.options.notes.line(text)
    this.tools.interrupted()
  }

  private redact(text: string): string {
    return this.options.redact ? this.options.redact(text) : text
  }

  private endBlock(): void {
    if (this.streaming === 'text') this.options.answer.newline()
    if (this.streaming === 'reasoning') this.options.notes.newline()
    this.streaming = undefined
  }
}

/** Why the permission mode changed, as the summary says it. */
const MODE_CAUSES: Record<string, string> = {
  'plan-approved': ' (plan approved)',
  person: '',
  parent: " (the parent agent's mode)",
  start: '',
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
