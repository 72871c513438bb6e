import { CallId, LlmError, type FinishReason, type StreamChunk, type TokenUsage } from '@deepseek-ai/dsh-llm'
import type { ScriptReply } from './script'
import { estimateUsage } from './usage-estimate'

/** How replies are cut into deltas. */
export interface ChunkingOptions {
  /** `'word'`: one delta per word (with its leading whitespace); a number: deltas of that many characters. */
  textChunking: 'word' | number
  /** Tool-call arguments are streamed in fragments of this many characters. */
  argumentChunkSize: number
  /** The usage of a reply that gives none: `true` an estimate, `false` none, a `TokenUsage` a copy of it (see `UsageOption`). */
  usage: boolean | Readonly<TokenUsage>
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

/** The empty list a reply without reasoning or tool calls reads (not a new one per call). */
const NONE: readonly never[] = Object.freeze([])

function pieces(value: string | readonly string[] | undefined, chunking: 'word' | number): readonly string[] {
  if (value === undefined) return NONE
  return typeof value === 'string' ? cut(value, chunking) : value
}

function thrown(value: NonNullable<ScriptReply['throw']>): Error {
  return typeof value === 'string' ? new Error(value) : new LlmError(value)
}

/**
 * Whether playing `reply` asks for the input size: only a reply whose usage
 * is estimated does, so the history is not counted for the others.
 */
export function estimatesUsage(reply: string | ScriptReply, options: ChunkingOptions): boolean {
  if (options.usage !== true) return false
  return typeof reply === 'string' || (reply.chunks === undefined && reply.throw === undefined && reply.usage === undefined)
}

/**
 * The chunks of one reply, made one at a time as they are pulled, in the
 * order a real provider streams them: reasoning deltas (block 0), text deltas
 * (next block), each tool call (its own block: id and name with the first
 * fragment, then argument fragments), `usage`, then `finish` — or, as the
 * reply says, an error finish, a throw after the content (the iterator
 * throws), or no finish at all. `inputChars` is the size of the request,
 * read only when the usage is estimated (see `estimatesUsage`).
 *
 * Lazy on purpose: a long reply streams without a planned array of all its
 * chunks, and the iterator's own `{ value, done }` results are what the
 * scripted stream hands on.
 */
export function* replyChunks(
  reply: string | ScriptReply,
  callIndex: number,
  inputChars: number,
  options: ChunkingOptions,
): Generator<StreamChunk, void, undefined> {
  const r: ScriptReply = typeof reply === 'string' ? { text: reply } : reply
  if (r.chunks !== undefined) {
    yield* r.chunks
    if (r.throw !== undefined) throw thrown(r.throw)
    return
  }
  let index = 0
  let outputChars = 0
  let reasoningChars = 0

  const reasoning = pieces(r.reasoning, options.textChunking)
  if (reasoning.length > 0) {
    const last = reasoning.length - 1
    for (let i = 0; i < last; i++) {
      const text = reasoning[i]!
      reasoningChars += text.length
      yield { type: 'reasoning-delta', index, text }
    }
    const text = reasoning[last]!
    reasoningChars += text.length
    yield r.signature === undefined ? { type: 'reasoning-delta', index, text } : { type: 'reasoning-delta', index, text, signature: r.signature }
    index++
  }

  const text = pieces(r.text, options.textChunking)
  if (text.length > 0) {
    for (let i = 0; i < text.length; i++) {
      const piece = text[i]!
      outputChars += piece.length
      yield { type: 'text-delta', index, text: piece }
    }
    index++
  }

  const calls = r.toolCalls ?? NONE
  for (let position = 0; position < calls.length; position++) {
    const call = calls[position]!
    const id = CallId(call.id ?? `call_${callIndex}_${position}`)
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {})
    outputChars += call.name.length + args.length
    const size = options.argumentChunkSize
    yield { type: 'tool-call-delta', index, id, name: call.name, argumentsDelta: args.slice(0, size) }
    for (let at = size; at < args.length; at += size) {
      yield { type: 'tool-call-delta', index, argumentsDelta: args.slice(at, at + size) }
    }
    index++
  }

  if (r.throw !== undefined) throw thrown(r.throw)

  const usage: TokenUsage | undefined = r.usage === false ? undefined : r.usage ?? modelUsage(options.usage, inputChars, outputChars, reasoningChars)
  if (usage !== undefined) yield { type: 'usage', usage }

  if (r.noFinish) return
  let reason: FinishReason
  if (r.error !== undefined) reason = { kind: 'error', failure: r.error }
  else reason = { kind: r.finish ?? (calls.length > 0 ? 'tool-calls' : 'stop') }
  yield { type: 'finish', reason }
}

/** The usage the model reports for a reply that gives none (a fresh object per call, as a provider's parsed report is). */
function modelUsage(usage: boolean | Readonly<TokenUsage>, inputChars: number, outputChars: number, reasoningChars: number): TokenUsage | undefined {
  if (usage === true) return estimateUsage(inputChars, outputChars, reasoningChars)
  if (usage === false) return undefined
  return { ...usage }
}

/** Chunks that end in a throw of `error` right away (a responder that failed). */
export function* failing(error: unknown): Generator<StreamChunk, void, undefined> {
  throw error
}

/** Every chunk of `chunks` at once, and what it throws after them: what a controlled call releases. */
export function collectPlan(chunks: Iterator<StreamChunk, void, undefined>): Plan {
  const out: StreamChunk[] = []
  try {
    for (let result = chunks.next(); !result.done; result = chunks.next()) out.push(result.value)
  } catch (error) {
    return { chunks: out, error }
  }
  return { chunks: out }
}
