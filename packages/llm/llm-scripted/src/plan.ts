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
  return typeof value === 'string' ? new Error(value) : new LlmError({ ...value })
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
 * scripted stream hands on. A reply of text alone (the usual answer) is
 * played by `TextChunks`, which makes the same chunks and results without a
 * generator frame to resume per chunk; any other by a generator. Either way,
 * once the iterator finished (or threw) its `next()` answers done.
 */
export function replyChunks(
  reply: string | ScriptReply,
  callIndex: number,
  inputChars: number,
  options: ChunkingOptions,
): Iterator<StreamChunk, void, undefined> {
  const r: ScriptReply = typeof reply === 'string' ? { text: reply } : reply
  if (r.chunks === undefined && r.throw === undefined && r.reasoning === undefined && (r.toolCalls === undefined || r.toolCalls.length === 0)) {
    return new TextChunks(r, pieces(r.text, options.textChunking), inputChars, options)
  }
  return playedChunks(r, callIndex, inputChars, options)
}

/** Where a `TextChunks` is: at a text delta (`0`…), or at one of these, in this order. */
const AT_USAGE = -1
const AT_FINISH = -2
const ENDED = -3

/**
 * The chunks of a reply of text only (no scripted chunks, no throw, no
 * reasoning, no tool calls), as `playedChunks` makes them: the text deltas
 * (block 0), then `usage` and `finish` as the reply says. An iterator that
 * is also its own `Iterable`, as a generator is; `return()` ends it. The
 * results are new `{ value, done }` objects in a generator's key order.
 */
class TextChunks implements Iterator<StreamChunk, void, undefined>, Iterable<StreamChunk> {
  // Fields are `declare`d and set in the constructor: no per-construction field initializer (see dsh-llm's `ProtocolStream`).
  /** The next text delta's position, or `AT_USAGE`, `AT_FINISH`, `ENDED`. */
  private declare at: number
  private declare outputChars: number
  private declare readonly reply: ScriptReply
  private declare readonly text: readonly string[]
  private declare readonly inputChars: number
  private declare readonly options: ChunkingOptions

  constructor(reply: ScriptReply, text: readonly string[], inputChars: number, options: ChunkingOptions) {
    this.at = text.length === 0 ? AT_USAGE : 0
    this.outputChars = 0
    this.reply = reply
    this.text = text
    this.inputChars = inputChars
    this.options = options
  }

  [Symbol.iterator](): this {
    return this
  }

  next(): IteratorResult<StreamChunk, void> {
    const at = this.at
    if (at >= 0) {
      const text = this.text
      const piece = text[at]!
      this.at = at + 1 === text.length ? AT_USAGE : at + 1
      this.outputChars += piece.length
      return { value: { type: 'text-delta', index: 0, text: piece }, done: false }
    }
    return this.end(at)
  }

  return(): IteratorResult<StreamChunk, void> {
    this.at = ENDED
    return { value: undefined, done: true }
  }

  /** The chunks after the text: `usage` (unless there is none), then `finish` (unless `noFinish`), then done. */
  private end(at: number): IteratorResult<StreamChunk, void> {
    const r = this.reply
    if (at === AT_USAGE) {
      this.at = AT_FINISH
      const usage = replyUsage(r, this.options, this.inputChars, this.outputChars, 0)
      if (usage !== undefined) return { value: { type: 'usage', usage }, done: false }
    }
    if (this.at === AT_FINISH) {
      this.at = ENDED
      if (!r.noFinish) return { value: { type: 'finish', reason: replyFinish(r, false) }, done: false }
    }
    return { value: undefined, done: true }
  }
}

/** `replyChunks` for any reply, as a generator. */
function* playedChunks(r: ScriptReply, callIndex: number, inputChars: number, options: ChunkingOptions): Generator<StreamChunk, void, undefined> {
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

  const usage = replyUsage(r, options, inputChars, outputChars, reasoningChars)
  if (usage !== undefined) yield { type: 'usage', usage }

  if (r.noFinish) return
  yield { type: 'finish', reason: replyFinish(r, calls.length > 0) }
}

/**
 * The usage a reply reports after its content: none with `usage: false`, a
 * copy of the reply's own (the log deep-freezes what it stores, and a real
 * adapter parses a fresh report per call), or the model's.
 */
function replyUsage(r: ScriptReply, options: ChunkingOptions, inputChars: number, outputChars: number, reasoningChars: number): TokenUsage | undefined {
  const usage = r.usage
  if (usage === false) return undefined
  return usage === undefined ? modelUsage(options.usage, inputChars, outputChars, reasoningChars) : { ...usage }
}

/** The reason a reply finishes with: (a copy of) its error, its `finish`, or `tool-calls` / `stop` by what it called. */
function replyFinish(r: ScriptReply, calledTools: boolean): FinishReason {
  return r.error !== undefined ? { kind: 'error', failure: { ...r.error } } : { kind: r.finish ?? (calledTools ? 'tool-calls' : 'stop') }
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
