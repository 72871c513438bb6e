import { newCallId, type CallId, type FinishReason, type LlmFailure, type StreamChunk, type TokenUsage } from '@deepseek-ai/dsh-llm'
import { toTokenUsage } from './usage'

interface ToolSlot {
  /** The content-block index, given at the call's first appearance. */
  readonly index: number
  id?: string
  /** The id the server gave this call (not one made up for it). */
  given?: string
  name?: string
  /** Argument text received before the name; sent with the first chunk. */
  pending: string
  announced: boolean
}

/**
 * What one payload amounted to besides its chunks: nothing, an in-stream
 * error object (classified by the adapter), or a break of the stream format
 * that ends the stream as `MALFORMED_STREAM`.
 */
export type PushResult = undefined | { kind: 'error'; payload: unknown } | { kind: 'malformed'; message: string }

/** How much of a tool-call id a failure message quotes. */
const maxQuotedId = 100

/** The end of a decoded stream: either a finish to emit, or the reason there is none. */
export type DecodedEnd =
  | { kind: 'finish'; chunks: StreamChunk[] }
  | { kind: 'no-finish'; produced: boolean }

/**
 * Turns chat-completions stream payloads (the parsed JSON of each `data:`
 * event) into `StreamChunk`s, following the stream protocol (R-LLM-6):
 *
 * - Only choice 0 is read (the adapter never asks for more).
 * - Reasoning (`reasoning_content`, or `reasoning` as some servers name it),
 *   text (`content`, also as a list of text and thinking parts) and each tool call (by its `index` in `tool_calls`) get
 *   their own content-block index, numbered in order of first appearance and
 *   stable for the whole stream. Empty strings open nothing.
 * - Arguments sent as a JSON object rather than as text are taken as that
 *   object's JSON text.
 * - A tool call's first chunk carries its id and name; argument fragments that
 *   arrive before the name are held and sent with it. A call without an id
 *   gets a fresh one. A fragment with a function name and an id other than
 *   the one its index's call was given starts a new call: Ollama gives every
 *   parallel call index 0, and merging them would run one call with
 *   concatenated arguments and lose the others. Without a name, a changed id
 *   is read as the same call continuing (servers that resend an id, or make a
 *   new one, with every fragment). A call that has the id of another call of the message
 *   breaks the stream (`MALFORMED_STREAM`): its results could not say which
 *   call they answer, and running both might run one action twice.
 * - `usage` (DeepSeek sends it with the finish, OpenAI in a last chunk with no
 *   choices) is mapped to non-overlapping counts and emitted once, just before
 *   the finish.
 * - The finish is emitted only by `end()`, after `[DONE]` or the end of the
 *   body, so a usage chunk that trails the finish reason is not lost.
 */
export class StreamDecoder {
  private next = 0
  private reasoningIndex = -1
  private textIndex = -1
  /** The latest call of each stream index (or id), which fragments without their own start continue. */
  private readonly tools = new Map<number | string, ToolSlot>()
  /** Every call of the answer, in order of first appearance. */
  private readonly slots: ToolSlot[] = []
  /** The tool-call ids seen so far, to the slot that carries each. */
  private readonly ids = new Map<string, ToolSlot>()
  private malformed: string | undefined
  private finishReason: string | undefined
  private usage: TokenUsage | undefined
  private produced = false

  constructor(private readonly provider: string) {}

  /**
   * Decodes one payload; content chunks go to `out` (those before a break of
   * the format included). After a `malformed` result the decoder takes
   * nothing more.
   */
  push(payload: unknown, out: StreamChunk[]): PushResult {
    if (payload === null || typeof payload !== 'object') return undefined
    const data = payload as Record<string, unknown>
    if (data.error !== undefined && data.error !== null) return { kind: 'error', payload: data }
    const usage = toTokenUsage(data.usage)
    if (usage) this.usage = usage
    if (!Array.isArray(data.choices)) return undefined
    for (const raw of data.choices) {
      if (raw === null || typeof raw !== 'object') continue
      const choice = raw as Record<string, unknown>
      if ((choice.index ?? 0) !== 0) continue
      const delta = choice.delta
      if (delta !== null && typeof delta === 'object') this.delta(delta as Record<string, unknown>, out)
      if (this.malformed !== undefined) return { kind: 'malformed', message: this.malformed }
      if (typeof choice.finish_reason === 'string' && choice.finish_reason) this.finishReason = choice.finish_reason
    }
    return undefined
  }

  private delta(delta: Record<string, unknown>, out: StreamChunk[]): void {
    const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : delta.reasoning
    if (typeof reasoning === 'string') this.reasoningText(reasoning, out)
    if (typeof delta.content === 'string') this.text(delta.content, out)
    else if (Array.isArray(delta.content)) this.contentParts(delta.content, out)
    if (Array.isArray(delta.tool_calls)) {
      for (let position = 0; position < delta.tool_calls.length && this.malformed === undefined; position++) {
        const call: unknown = delta.tool_calls[position]
        if (call !== null && typeof call === 'object') this.toolCall(call as Record<string, unknown>, position, out)
      }
    }
  }

  private reasoningText(text: string, out: StreamChunk[]): void {
    if (!text) return
    if (this.reasoningIndex < 0) this.reasoningIndex = this.next++
    out.push({ type: 'reasoning-delta', index: this.reasoningIndex, text })
    this.produced = true
  }

  private text(text: string, out: StreamChunk[]): void {
    if (!text) return
    if (this.textIndex < 0) this.textIndex = this.next++
    out.push({ type: 'text-delta', index: this.textIndex, text })
    this.produced = true
  }

  /**
   * Content sent as a list of parts (Mistral's Magistral): `{ type: 'text', text }` is text,
   * `{ type: 'thinking', thinking: [{ type: 'text', text }] }` (or a string) is reasoning; other
   * part types are skipped.
   */
  private contentParts(parts: unknown[], out: StreamChunk[]): void {
    for (const part of parts) {
      if (part === null || typeof part !== 'object') continue
      const { type, text, thinking } = part as Record<string, unknown>
      if (type === 'text' && typeof text === 'string') this.text(text, out)
      else if (type === 'thinking' && typeof thinking === 'string') this.reasoningText(thinking, out)
      else if (type === 'thinking' && Array.isArray(thinking)) {
        for (const inner of thinking) {
          const innerText = (inner as Record<string, unknown> | null)?.text
          if (typeof innerText === 'string') this.reasoningText(innerText, out)
        }
      }
    }
  }

  private toolCall(call: Record<string, unknown>, position: number, out: StreamChunk[]): void {
    const fn = (call.function ?? {}) as Record<string, unknown>
    const id = typeof call.id === 'string' && call.id ? call.id : undefined
    const name = typeof fn.name === 'string' && fn.name ? fn.name : undefined
    // Some servers (llama.cpp, TGI) send the arguments as a JSON object, not as its text: read as no arguments, the
    // tool would run with `{}` instead of what the model asked.
    const raw = fn.arguments
    const args = typeof raw === 'string' ? raw : raw !== null && typeof raw === 'object' ? JSON.stringify(raw) : ''
    // Servers that omit `index` send each call whole; fall back to its id, then its position.
    const key: number | string = typeof call.index === 'number' ? call.index : (id ?? `#${position}`)
    let slot = this.tools.get(key)
    if (slot !== undefined && id && name && slot.given !== undefined && slot.given !== id) slot = undefined
    if (!slot) {
      slot = { index: this.next++, pending: '', announced: false }
      this.tools.set(key, slot)
      this.slots.push(slot)
    }
    if (id && !slot.id) {
      const holder = this.ids.get(id)
      if (holder !== undefined && holder !== slot) {
        this.malformed = `${this.provider} streamed two tool calls with the id ${JSON.stringify(id.slice(0, maxQuotedId))} (content blocks ${holder.index} and ${slot.index}); the tool calls of one answer need distinct ids, so the answer cannot be used`
        return
      }
      this.ids.set(id, slot)
      slot.id = id
      slot.given = id
    }
    if (name && !slot.name) slot.name = name
    if (!slot.announced) {
      if (!slot.name) {
        slot.pending += args
        return
      }
      slot.announced = true
      if (slot.id === undefined) {
        slot.id = newCallId()
        this.ids.set(slot.id, slot)
      }
      out.push({
        type: 'tool-call-delta',
        index: slot.index,
        id: slot.id as CallId,
        name: slot.name,
        argumentsDelta: slot.pending + args,
      })
      slot.pending = ''
      this.produced = true
    } else if (args) {
      out.push({ type: 'tool-call-delta', index: slot.index, argumentsDelta: args })
    }
  }

  /** Whether any content chunk has been produced. */
  get hasOutput(): boolean {
    return this.produced
  }

  /** The usage chunk to send before a failure's finish, when the provider already reported usage. */
  usageChunk(): StreamChunk | undefined {
    return this.usage ? { type: 'usage', usage: this.usage } : undefined
  }

  /**
   * Ends the stream. With a finish reason: the usage chunk (if any) and the
   * finish. Without one: nothing, and whether content was produced, so the
   * caller can tell an empty response from a truncated one.
   */
  end(): DecodedEnd {
    const provider = this.provider
    if (this.finishReason === undefined) return { kind: 'no-finish', produced: this.produced }
    const chunks: StreamChunk[] = []
    const usage = this.usageChunk()
    if (usage) chunks.push(usage)
    const unnamed = this.slots.find((slot) => !slot.announced)
    const reason: FinishReason = unnamed
      ? {
          kind: 'error',
          failure: {
            code: 'MALFORMED_STREAM',
            message: `${provider} streamed a tool call (content block ${unnamed.index}) without a function name`,
          },
        }
      : finishReason(this.finishReason, this.slots.length > 0, provider)
    chunks.push({ type: 'finish', reason })
    return { kind: 'finish', chunks }
  }
}

/**
 * Maps a chat-completions `finish_reason`: `stop` (or `tool-calls` when the
 * answer did call tools, as some servers report `stop` then), `tool_calls` /
 * `function_call`, `length` (and Mistral's `model_length`) → `max-tokens`; `error` (Mistral, OpenRouter) is a
 * `SERVER` error. `content_filter` is an error
 * (`BAD_REQUEST`: the provider refused the content, retrying the same request
 * will not help), `insufficient_system_resource` (DeepSeek) a `SERVER` error,
 * and any other reason an `UNKNOWN` error naming it.
 */
export function finishReason(reason: string, calledTools: boolean, provider: string): FinishReason {
  const error = (failure: LlmFailure): FinishReason => ({ kind: 'error', failure })
  switch (reason) {
    case 'stop':
      return calledTools ? { kind: 'tool-calls' } : { kind: 'stop' }
    case 'tool_calls':
    case 'function_call':
      return { kind: 'tool-calls' }
    case 'length':
    case 'model_length': // Mistral: the context window ended the answer
      return { kind: 'max-tokens' }
    case 'error': // Mistral, OpenRouter: generation failed on the server
      return error({ code: 'SERVER', message: `${provider} failed while it generated the answer (finish_reason "error"); try again` })
    case 'content_filter':
      return error({
        code: 'BAD_REQUEST',
        message: `${provider}'s content filter stopped the answer (finish_reason "content_filter"); rephrase the request`,
      })
    case 'insufficient_system_resource':
      return error({
        code: 'SERVER',
        message: `${provider} stopped the answer for lack of server resources (finish_reason "insufficient_system_resource"); try again later`,
      })
    default:
      return error({ code: 'UNKNOWN', message: `${provider} ended the answer with an unknown finish_reason "${reason}"` })
  }
}
