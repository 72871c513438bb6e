import { CallId, LlmError, type FinishReason, type StreamChunk, type TokenUsage } from '@deepseek-ai/dsh-llm'
import type { ScriptReply } from './script'
import { estimateUsage } from './usage-estimate'

/** How replies are cut into deltas. */
export interface ChunkingOptions {
  /** `'word'`: one delta per word (with its leading whitespace); a number: deltas of that many characters. */
  textChunking: 'word' | number
  /** Tool-call arguments are streamed in fragments of this many characters. */
  argumentChunkSize: number
  /** Whether to add an estimated `usage` chunk when the reply gives none. */
  usage: boolean
}

/** What one model call streams: the chunks, then either the end of the stream or a throw. */
export interface Plan {
  readonly chunks: readonly StreamChunk[]
  /** Thrown after the chunks, when set. */
  readonly error?: unknown
}

const words = /\s*\S+|\s+$/g

/** Cuts `text` into deltas; joining them gives `text` back. */
export function cut(text: string, chunking: 'word' | number): string[] {
  if (text.length === 0) return []
  if (chunking === 'word') return text.match(words) ?? [text]
  const pieces: string[] = []
  for (let i = 0; i < text.length; i += chunking) pieces.push(text.slice(i, i + chunking))
  return pieces
}

function pieces(value: string | readonly string[] | undefined, chunking: 'word' | number): readonly string[] {
  if (value === undefined) return []
  return typeof value === 'string' ? cut(value, chunking) : value
}

function thrown(value: NonNullable<ScriptReply['throw']>): Error {
  return typeof value === 'string' ? new Error(value) : new LlmError(value)
}

/**
 * The chunks of one reply, in the order a real provider streams them:
 * reasoning deltas (block 0), text deltas (next block), each tool call (its
 * own block: id and name with the first fragment, then argument fragments),
 * `usage`, then `finish` — or, as the reply says, an error finish, a throw
 * after the content, or no finish at all. `inputChars` is only asked when
 * the usage is estimated.
 */
export function planReply(
  reply: string | ScriptReply,
  callIndex: number,
  inputChars: () => number,
  options: ChunkingOptions,
): Plan {
  const r: ScriptReply = typeof reply === 'string' ? { text: reply } : reply
  if (r.chunks !== undefined) return r.throw === undefined ? { chunks: r.chunks } : { chunks: r.chunks, error: thrown(r.throw) }
  const chunks: StreamChunk[] = []
  let index = 0
  let outputChars = 0
  let reasoningChars = 0

  const reasoning = pieces(r.reasoning, options.textChunking)
  if (reasoning.length > 0) {
    for (let i = 0; i < reasoning.length; i++) {
      const text = reasoning[i]!
      reasoningChars += text.length
      chunks.push(i === reasoning.length - 1 && r.signature !== undefined
        ? { type: 'reasoning-delta', index, text, signature: r.signature }
        : { type: 'reasoning-delta', index, text })
    }
    index++
  }

  const text = pieces(r.text, options.textChunking)
  if (text.length > 0) {
    for (const piece of text) {
      outputChars += piece.length
      chunks.push({ type: 'text-delta', index, text: piece })
    }
    index++
  }

  const calls = r.toolCalls ?? []
  for (let position = 0; position < calls.length; position++) {
    const call = calls[position]!
    const id = CallId(call.id ?? `call_${callIndex}_${position}`)
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {})
    outputChars += call.name.length + args.length
    const size = options.argumentChunkSize
    chunks.push({ type: 'tool-call-delta', index, id, name: call.name, argumentsDelta: args.slice(0, size) })
    for (let at = size; at < args.length; at += size) {
      chunks.push({ type: 'tool-call-delta', index, argumentsDelta: args.slice(at, at + size) })
    }
    index++
  }

  if (r.throw !== undefined) return { chunks, error: thrown(r.throw) }

  const usage: TokenUsage | undefined = r.usage === false
    ? undefined
    : r.usage ?? (options.usage ? estimateUsage(inputChars(), outputChars, reasoningChars) : undefined)
  if (usage !== undefined) chunks.push({ type: 'usage', usage })

  if (r.noFinish) return { chunks }
  let reason: FinishReason
  if (r.error !== undefined) reason = { kind: 'error', failure: r.error }
  else reason = { kind: r.finish ?? (calls.length > 0 ? 'tool-calls' : 'stop') }
  chunks.push({ type: 'finish', reason })
  return { chunks }
}
