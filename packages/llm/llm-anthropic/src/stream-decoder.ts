import { CallId, type FinishReason, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { foldUsage, toTokenUsage, type RawUsage } from './usage'

/** One content block of the answer as the decoder follows it. */
interface Block {
  /** The spine's block index (dense, in order of first appearance). */
  readonly index: number
  readonly kind: 'text' | 'reasoning' | 'redacted' | 'tool-call' | 'skipped'
  /** For a tool call: the `input` of `content_block_start`, sent at the stop when no JSON delta came. */
  startInput?: unknown
  /** For a tool call: whether any `input_json_delta` text arrived. */
  streamedInput?: boolean
  stopped: boolean
}

/**
 * What one event amounted to besides its chunks: nothing, an `error` event
 * (classified by the adapter), a break of the stream format
 * (`MALFORMED_STREAM`), or the end of the message.
 */
export type PushResult = undefined | { kind: 'error'; payload: unknown } | { kind: 'malformed'; message: string } | { kind: 'stop' }

/** How much of an id or type a failure message quotes. */
const maxQuoted = 100
const quote = (value: unknown) => JSON.stringify(String(value).slice(0, maxQuoted))

/**
 * Maps a `stop_reason` to the spine's finish: `end_turn`, `stop_sequence`
 * and `pause_turn` are `stop`; `tool_use` is `tool-calls`; `max_tokens` and
 * `model_context_window_exceeded` are `max-tokens` (the answer was cut);
 * `refusal` is an error (`BAD_REQUEST`: the same request would be declined
 * again); an unknown reason is `stop`.
 */
export function finishReasonOf(stopReason: string, provider: string): FinishReason {
  switch (stopReason) {
    case 'tool_use':
      return { kind: 'tool-calls' }
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { kind: 'max-tokens' }
    case 'refusal':
      return {
        kind: 'error',
        failure: { code: 'BAD_REQUEST', message: `${provider} declined to answer (stop_reason "refusal"); rephrase the request or start from an earlier point of the conversation` },
      }
    default:
      return { kind: 'stop' }
  }
}

/**
 * Turns Messages API stream events (the parsed JSON of each `data:` line)
 * into `StreamChunk`s, following the stream protocol (R-LLM-6):
 *
 * - Each `content_block_start` opens a block; the spine's indices are dense
 *   and in order of first appearance (blocks the adapter does not map, such
 *   as server tool results, are skipped and take none).
 * - `text_delta` → `text-delta`; `thinking_delta` → `reasoning-delta`;
 *   `signature_delta` → a `reasoning-delta` with empty text and the
 *   signature; a `redacted_thinking` block → one `redacted-reasoning-delta`
 *   with its data; a `tool_use` block → a first `tool-call-delta` with its id
 *   and name, then its `input_json_delta` text; a tool call whose input came
 *   whole in its start (or empty) gets that input as JSON (`{}`) at its stop.
 * - Two tool calls with one id break the stream (`MALFORMED_STREAM`).
 * - `usage` from `message_start` and every `message_delta` is folded into
 *   one cumulative snapshot, sent as a `usage` chunk after each event that
 *   reports usage (so the input side is known from the first event on). `ping` is ignored; an `error` event is returned for
 *   the adapter to classify.
 */
export class StreamDecoder {
  private next = 0
  private readonly blocks = new Map<number, Block>()
  private readonly ids = new Set<string>()
  private readonly raw: RawUsage = {}
  private stopReason: string | undefined
  private stopped = false
  /** Whether any content chunk was produced. */
  produced = false

  constructor(private readonly provider: string) {}

  /** Decodes one event; chunks go to `out`. After a `malformed` result the decoder takes nothing more. */
  push(payload: unknown, out: StreamChunk[]): PushResult {
    if (payload === null || typeof payload !== 'object') return undefined
    const event = payload as Record<string, unknown>
    switch (event.type) {
      case 'message_start': {
        // Sent at once: a call cut later still reports what its prompt cost (and what it read from the cache).
        const message = event.message as Record<string, unknown> | undefined
        if (foldUsage(this.raw, message?.usage)) out.push({ type: 'usage', usage: toTokenUsage(this.raw) })
        return undefined
      }
      case 'content_block_start':
        return this.start(event, out)
      case 'content_block_delta':
        return this.delta(event, out)
      case 'content_block_stop':
        return this.stop(event, out)
      case 'message_delta': {
        const delta = event.delta as Record<string, unknown> | undefined
        if (typeof delta?.stop_reason === 'string') this.stopReason = delta.stop_reason
        if (foldUsage(this.raw, event.usage)) out.push({ type: 'usage', usage: toTokenUsage(this.raw) })
        return undefined
      }
      case 'message_stop':
        this.stopped = true
        return { kind: 'stop' }
      case 'error':
        return { kind: 'error', payload: event }
      default:
        // `ping`, and event types added after this adapter was written.
        return undefined
    }
  }

  private block(event: Record<string, unknown>): number | undefined {
    const index = event.index
    return typeof index === 'number' && Number.isSafeInteger(index) && index >= 0 ? index : undefined
  }

  private start(event: Record<string, unknown>, out: StreamChunk[]): PushResult {
    const at = this.block(event)
    const content = event.content_block as Record<string, unknown> | undefined
    if (at === undefined || content === null || typeof content !== 'object') {
      return { kind: 'malformed', message: `${this.provider} sent a content_block_start without an index or a block` }
    }
    if (this.blocks.has(at)) return { kind: 'malformed', message: `${this.provider} started content block ${at} twice` }
    const open = (kind: Block['kind']): Block => {
      const block: Block = { index: kind === 'skipped' ? -1 : this.next++, kind, stopped: false }
      this.blocks.set(at, block)
      return block
    }
    switch (content.type) {
      case 'text': {
        const block = open('text')
        if (typeof content.text === 'string' && content.text) this.emit(out, { type: 'text-delta', index: block.index, text: content.text })
        return undefined
      }
      case 'thinking': {
        const block = open('reasoning')
        const text = typeof content.thinking === 'string' ? content.thinking : ''
        const signature = typeof content.signature === 'string' && content.signature ? content.signature : undefined
        if (text || signature) this.emit(out, signature ? { type: 'reasoning-delta', index: block.index, text, signature } : { type: 'reasoning-delta', index: block.index, text })
        return undefined
      }
      case 'redacted_thinking': {
        const block = open('redacted')
        if (typeof content.data !== 'string') return { kind: 'malformed', message: `${this.provider} sent a redacted_thinking block without its data` }
        this.emit(out, { type: 'redacted-reasoning-delta', index: block.index, data: content.data })
        return undefined
      }
      case 'tool_use': {
        const { id, name } = content
        if (typeof id !== 'string' || !id || typeof name !== 'string' || !name) {
          return { kind: 'malformed', message: `${this.provider} sent a tool_use block without its id or name` }
        }
        if (this.ids.has(id)) {
          return { kind: 'malformed', message: `${this.provider} sent two tool calls with the id ${quote(id)}: their results could not say which call they answer` }
        }
        this.ids.add(id)
        const block = open('tool-call')
        block.startInput = content.input
        this.emit(out, { type: 'tool-call-delta', index: block.index, id: CallId(id), name, argumentsDelta: '' })
        return undefined
      }
      default:
        open('skipped')
        return undefined
    }
  }

  private delta(event: Record<string, unknown>, out: StreamChunk[]): PushResult {
    const at = this.block(event)
    const block = at === undefined ? undefined : this.blocks.get(at)
    if (block === undefined || block.stopped) {
      return { kind: 'malformed', message: `${this.provider} sent a delta for content block ${String(event.index)}, which is not open` }
    }
    const delta = event.delta as Record<string, unknown> | undefined
    if (block.kind === 'skipped' || delta === null || typeof delta !== 'object') return undefined
    const index = block.index
    const mismatch = (): PushResult => ({ kind: 'malformed', message: `${this.provider} sent a ${quote(delta.type)} delta for a ${block.kind} block (${at})` })
    switch (delta.type) {
      case 'text_delta':
        if (block.kind !== 'text' || typeof delta.text !== 'string') return mismatch()
        if (delta.text) this.emit(out, { type: 'text-delta', index, text: delta.text })
        return undefined
      case 'thinking_delta':
        if (block.kind !== 'reasoning' || typeof delta.thinking !== 'string') return mismatch()
        if (delta.thinking) this.emit(out, { type: 'reasoning-delta', index, text: delta.thinking })
        return undefined
      case 'signature_delta':
        if (block.kind !== 'reasoning' || typeof delta.signature !== 'string') return mismatch()
        this.emit(out, { type: 'reasoning-delta', index, text: '', signature: delta.signature })
        return undefined
      case 'input_json_delta':
        if (block.kind !== 'tool-call' || typeof delta.partial_json !== 'string') return mismatch()
        if (delta.partial_json) {
          block.streamedInput = true
          this.emit(out, { type: 'tool-call-delta', index, argumentsDelta: delta.partial_json })
        }
        return undefined
      default:
        // `citations_delta` and delta types added after this adapter was written.
        return undefined
    }
  }

  private stop(event: Record<string, unknown>, out: StreamChunk[]): PushResult {
    const at = this.block(event)
    const block = at === undefined ? undefined : this.blocks.get(at)
    if (block === undefined || block.stopped) return { kind: 'malformed', message: `${this.provider} stopped content block ${String(event.index)}, which is not open` }
    block.stopped = true
    if (block.kind === 'tool-call' && !block.streamedInput) {
      const input = block.startInput
      const whole = input !== null && typeof input === 'object' && !Array.isArray(input) ? JSON.stringify(input) : '{}'
      this.emit(out, { type: 'tool-call-delta', index: block.index, argumentsDelta: whole })
    }
    return undefined
  }

  private emit(out: StreamChunk[], chunk: StreamChunk): void {
    this.produced = true
    out.push(chunk)
  }

  /**
   * The finish of a stream whose body ended (or sent `message_stop`): from the
   * last `stop_reason`, or `undefined` when the message never said how it
   * ended (a cut stream).
   */
  finish(): FinishReason | undefined {
    if (this.stopReason !== undefined) return finishReasonOf(this.stopReason, this.provider)
    // A `message_stop` without a `stop_reason` (a lax compatible server): the answer is complete.
    return this.stopped ? { kind: 'stop' } : undefined
  }
}
