import type { ContentBlock } from './content'
import type { LlmFailure } from './failure'
import type { CallId } from './ids'
import { TextRecord, ToolCallRecord, objectList, stringList } from './records'
import type { FinishReason, StreamChunk, TokenUsage } from './stream'

/** What a chunk stream amounts to: the assistant content, the last usage and why it ended. */
export interface AssembledResponse {
  /**
   * The content blocks, ordered by index. For a stream that finished with
   * `stop`, `tool-calls` or `max-tokens` these are all the blocks as streamed.
   * For an `error` or `aborted` finish, or a malformed stream, they are the
   * `partial()` blocks: text, reasoning and redacted reasoning as received,
   * and only the tool calls whose arguments parse as JSON.
   */
  content: ContentBlock[]
  /** The last `usage` snapshot, if any arrived. */
  usage?: TokenUsage
  /**
   * The stream's `finish` reason; `{ kind: 'error', failure }` with code
   * `MALFORMED_STREAM` when the sequence broke the protocol (R-LLM-5),
   * including a stream that has no `finish`.
   */
  finishReason: FinishReason
}

/**
 * Builds an assistant response from stream chunks as they arrive. `push`
 * never throws: a chunk that breaks the protocol (a chunk after `finish`, an
 * index whose kind changes, a tool call whose first delta lacks `id` or
 * `name`, a second tool call with the id of an earlier one, a malformed
 * chunk) records a `MALFORMED_STREAM` failure, and later chunks are ignored.
 * A message whose tool calls share an id cannot be answered (each result
 * names the call it answers), and the session log refuses it, so the
 * assembler refuses it first, whatever adapter produced it. `push` is O(1): deltas are collected as they come and
 * each block's text is joined once, when `result()` or `partial()` builds it,
 * into flat strings of up to 4,096 deltas each, concatenated (not a rope of the
 * deltas, which would keep a cons cell per delta alive for as long as the
 * message lives). A read closes the current piece, so a caller that reads
 * `partial()` after every delta gets a piece, and a cons cell, per read. A
 * whole stream costs O(total chunk size).
 */
export interface Assembler {
  push(chunk: StreamChunk): void
  /** Whether a `finish` arrived or the stream broke the protocol: later chunks are ignored. */
  readonly settled: boolean
  /** The protocol failure, if the stream broke the protocol. */
  readonly failure: LlmFailure | undefined
  /** How many chunks were pushed. */
  readonly count: number
  /** The response so far; a stream without `finish` is reported as `MALFORMED_STREAM`. */
  result(): AssembledResponse
  /**
   * What is safe to keep of a stream that was cut (cancel, failure): the text,
   * reasoning and redacted-reasoning blocks received so far (providers send a
   * redacted block whole, in one chunk), and only the tool calls whose
   * arguments parse as JSON, ordered by index.
   */
  partial(): ContentBlock[]
}

const TEXT = 1
const REASONING = 2
const TOOL_CALL = 3
const REDACTED = 4
type Kind = typeof TEXT | typeof REASONING | typeof TOOL_CALL | typeof REDACTED

const kindNames = { [TEXT]: 'text', [REASONING]: 'reasoning', [TOOL_CALL]: 'tool-call', [REDACTED]: 'redacted-reasoning' } as const

/**
 * Deltas per joined piece. `Array.prototype.join` of a long array costs many
 * times more per element than joins of shorter ones (Node 20, 5-character
 * deltas: about 180 ns per delta in one join of 16,384 or more, 15–25 ns in
 * joins of 4,096), so a long block is joined piece by piece as it streams and
 * the pieces once at the end.
 */
export const PIECE = 4096

/** Blocks a message may have before the assembler indexes them in maps (lookups scan up to this many). */
const SCAN = 16

/**
 * One content block under construction. One shape for every kind keeps the
 * hot path monomorphic. Its fields are `declare`d and set in the constructor:
 * class fields compile (ES2022) to a separate initializer V8 calls on every
 * construction, one more call per block in the cold round's unoptimized code.
 */
class BlockBuilder {
  /** The deltas not yet joined into a piece (fewer than `PIECE`). */
  private declare parts: string[]
  /** Joined runs of `PIECE` deltas, in order, before `parts`; after a join of everything, its one element is the text so far. */
  private declare pieces: string[]
  declare signature: string | undefined
  declare readonly index: number
  declare readonly kind: Kind
  declare readonly id: string | undefined
  declare readonly name: string | undefined

  constructor(index: number, kind: Kind, id: string | undefined, name: string | undefined) {
    this.parts = stringList()
    this.pieces = stringList()
    this.signature = undefined
    this.index = index
    this.kind = kind
    this.id = id
    this.name = name
  }

  add(delta: string): void {
    const parts = this.parts
    parts.push(delta)
    if (parts.length === PIECE) {
      this.pieces.push(parts.join(''))
      this.parts = stringList()
    }
  }

  /**
   * The block's text: each run of deltas joined into one flat string, and
   * the runs (one per `PIECE` deltas, or fewer: a read ends the current run)
   * concatenated. A block of fewer than `PIECE` deltas read once is one flat
   * string; otherwise a rope of its flat pieces (a cons cell per piece, not
   * per delta), which V8 flattens on the first read that needs a flat
   * string. Why not one more `join` of
   * the pieces: its result is a fresh flat string as large as the whole text
   * (a long answer's 500 KB is a fresh large-object allocation, about 120
   * page faults), paid by every long answer whether anything reads its text
   * that way or not.
   */
  get text(): string {
    const parts = this.parts
    const pieces = this.pieces
    if (parts.length !== 0) {
      pieces.push(parts.length === 1 ? parts[0]! : parts.join(''))
      this.parts = stringList()
    }
    if (pieces.length === 1) return pieces[0]!
    if (pieces.length === 0) return ''
    let text = pieces[0]!
    for (let i = 1; i < pieces.length; i++) text += pieces[i]!
    this.pieces = [text]
    return text
  }

  build(): ContentBlock {
    const text = this.text
    if (this.kind === TEXT) return new TextRecord(text)
    if (this.kind === REASONING) {
      return this.signature === undefined
        ? { type: 'reasoning', text }
        : { type: 'reasoning', text, signature: this.signature }
    }
    if (this.kind === REDACTED) return { type: 'redacted-reasoning', data: text }
    return new ToolCallRecord(this.id as CallId, this.name!, text)
  }
}

function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

function parses(json: string): boolean {
  try {
    JSON.parse(json)
    return true
  } catch {
    return false
  }
}

class StreamAssembler implements Assembler {
  /**
   * The blocks by index and the tool-call blocks by id, built once a message
   * has more than `SCAN` blocks; before that (every usual answer) a lookup
   * scans `opened`, and an assembler costs no map.
   */
  private declare byIndex: Map<number, BlockBuilder> | undefined
  private declare byId: Map<string, BlockBuilder> | undefined
  /** The blocks in the order they opened; `inOrder` while that is also index order (the usual case). */
  private declare readonly opened: BlockBuilder[]
  private declare inOrder: boolean
  private declare last: BlockBuilder | undefined
  private declare usage: TokenUsage | undefined
  private declare finish: FinishReason | undefined
  private declare problem: LlmFailure | undefined
  private declare chunks: number

  // Fields set here, not as class fields (see `BlockBuilder`).
  constructor() {
    this.byIndex = undefined
    this.byId = undefined
    this.opened = objectList()
    this.inOrder = true
    this.last = undefined
    this.usage = undefined
    this.finish = undefined
    this.problem = undefined
    this.chunks = 0
  }

  get settled(): boolean {
    return this.finish !== undefined || this.problem !== undefined
  }

  get failure(): LlmFailure | undefined {
    return this.problem
  }

  get count(): number {
    return this.chunks
  }

  push(chunk: StreamChunk): void {
    const n = this.chunks++
    if (this.problem !== undefined) return
    if (chunk === null || typeof chunk !== 'object') return this.malformed(n, `expected a chunk object, got ${chunk === null ? 'null' : typeof chunk}`)
    if (this.finish !== undefined) return this.malformed(n, `a ${String(chunk.type)} chunk arrived after finish`)
    switch (chunk.type) {
      case 'text-delta':
        if (typeof chunk.text !== 'string') return this.malformed(n, 'text-delta.text must be a string')
        this.append(n, chunk.index, TEXT, chunk.text)
        return
      case 'reasoning-delta': {
        if (typeof chunk.text !== 'string') return this.malformed(n, 'reasoning-delta.text must be a string')
        if (chunk.signature !== undefined && typeof chunk.signature !== 'string') return this.malformed(n, 'reasoning-delta.signature must be a string')
        const block = this.append(n, chunk.index, REASONING, chunk.text)
        if (block !== undefined && chunk.signature !== undefined) block.signature = chunk.signature
        return
      }
      case 'tool-call-delta':
        if (typeof chunk.argumentsDelta !== 'string') return this.malformed(n, 'tool-call-delta.argumentsDelta must be a string')
        return this.toolCall(n, chunk)
      case 'redacted-reasoning-delta':
        if (typeof chunk.data !== 'string') return this.malformed(n, 'redacted-reasoning-delta.data must be a string')
        this.append(n, chunk.index, REDACTED, chunk.data)
        return
      case 'usage':
        if (chunk.usage === null || typeof chunk.usage !== 'object') return this.malformed(n, 'usage.usage must be an object')
        this.usage = chunk.usage
        return
      case 'finish':
        if (chunk.reason === null || typeof chunk.reason !== 'object' || typeof chunk.reason.kind !== 'string') {
          return this.malformed(n, 'finish.reason must be an object with a kind')
        }
        this.finish = chunk.reason
        return
      default:
        return this.malformed(n, `unknown chunk type ${JSON.stringify((chunk as { type?: unknown }).type)}`)
    }
  }

  /** Appends `text` to the block at `index`, opening it as `kind` on first sight. */
  private append(n: number, index: number, kind: Kind, text: string): BlockBuilder | undefined {
    let block = this.last
    if (block === undefined || block.index !== index) {
      if (!isIndex(index)) {
        this.malformed(n, `index must be a non-negative integer (got ${String(index)})`)
        return undefined
      }
      block = this.find(index)
      if (block === undefined) {
        block = this.open(index, kind, undefined, undefined)
      }
      this.last = block
    }
    if (block.kind !== kind) {
      this.malformed(n, `block ${index} started as ${kindNames[block.kind]} and then received a ${kindNames[kind]} delta`)
      return undefined
    }
    block.add(text)
    return block
  }

  private toolCall(n: number, chunk: Extract<StreamChunk, { type: 'tool-call-delta' }>): void {
    const { index, id, name } = chunk
    if (id !== undefined && (typeof id !== 'string' || id.length === 0)) return this.malformed(n, 'tool-call-delta.id must be a non-empty string when set')
    if (name !== undefined && (typeof name !== 'string' || name.length === 0)) return this.malformed(n, 'tool-call-delta.name must be a non-empty string when set')
    let block = this.last
    if (block === undefined || block.index !== index) {
      if (!isIndex(index)) return this.malformed(n, `index must be a non-negative integer (got ${String(index)})`)
      block = this.find(index)
      if (block === undefined) {
        if (id === undefined || name === undefined) {
          return this.malformed(n, `the first tool-call-delta of block ${index} must carry both id and name`)
        }
        const holder = this.callWithId(id)
        if (holder !== undefined) {
          return this.malformed(n, `tool call ${index} has the id ${JSON.stringify(id)} of tool call ${holder.index}; the ids of one message's tool calls must differ`)
        }
        block = this.open(index, TOOL_CALL, id, name)
      }
      this.last = block
    }
    if (block.kind !== TOOL_CALL) {
      return this.malformed(n, `block ${index} started as ${kindNames[block.kind]} and then received a tool-call delta`)
    }
    if ((id !== undefined && id !== block.id) || (name !== undefined && name !== block.name)) {
      return this.malformed(n, `tool call ${index} changed its id or name mid-stream (${block.id}/${block.name} → ${id ?? block.id}/${name ?? block.name})`)
    }
    block.add(chunk.argumentsDelta)
  }

  private malformed(n: number, detail: string): void {
    this.problem = { code: 'MALFORMED_STREAM', message: `malformed model stream at chunk ${n}: ${detail}` }
  }

  private open(index: number, kind: Kind, id: string | undefined, name: string | undefined): BlockBuilder {
    const block = new BlockBuilder(index, kind, id, name)
    const opened = this.opened
    if (opened.length !== 0 && opened[opened.length - 1]!.index > index) this.inOrder = false
    opened.push(block)
    if (this.byIndex !== undefined) this.remember(block)
    else if (opened.length > SCAN) this.indexAll()
    return block
  }

  /** The block at `index`, if one was opened. */
  private find(index: number): BlockBuilder | undefined {
    if (this.byIndex !== undefined) return this.byIndex.get(index)
    const opened = this.opened
    for (let i = 0; i < opened.length; i++) if (opened[i]!.index === index) return opened[i]
    return undefined
  }

  /** The tool-call block with `id`, if one was opened. */
  private callWithId(id: string): BlockBuilder | undefined {
    if (this.byId !== undefined) return this.byId.get(id)
    const opened = this.opened
    for (let i = 0; i < opened.length; i++) {
      const block = opened[i]!
      if (block.kind === TOOL_CALL && block.id === id) return block
    }
    return undefined
  }

  /** Builds the maps once the message has more blocks than a scan should walk. */
  private indexAll(): void {
    this.byIndex = new Map()
    this.byId = new Map()
    const opened = this.opened
    for (let i = 0; i < opened.length; i++) this.remember(opened[i]!)
  }

  private remember(block: BlockBuilder): void {
    this.byIndex!.set(block.index, block)
    if (block.kind === TOOL_CALL) this.byId!.set(block.id!, block)
  }

  /** The blocks in index order. */
  private ordered(): readonly BlockBuilder[] {
    return this.inOrder ? this.opened : this.opened.slice().sort(byIndex)
  }

  partial(): ContentBlock[] {
    const blocks = this.ordered()
    const out: ContentBlock[] = []
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i]!
      if (block.kind !== TOOL_CALL || parses(block.text)) out.push(block.build())
    }
    return out
  }

  result(): AssembledResponse {
    const problem = this.problem
    const finish = this.finish
    if (problem !== undefined || finish === undefined || finish.kind === 'error' || finish.kind === 'aborted') return this.cut()
    // Built by `push`, not `Array.prototype.map`: a mapped list is packed when the map runs in the interpreter and
    // holey once V8 inlined it, and the content list's hidden class then changed mid-session (see `frozenContent`).
    const blocks = this.ordered()
    const content: ContentBlock[] = []
    for (let i = 0; i < blocks.length; i++) content.push(blocks[i]!.build())
    return this.usage === undefined ? { content, finishReason: finish } : { content, finishReason: finish, usage: this.usage }
  }

  /** The response of a stream that failed, was aborted or broke the protocol: the `partial()` blocks. */
  private cut(): AssembledResponse {
    let reason: FinishReason
    if (this.problem !== undefined) reason = { kind: 'error', failure: this.problem }
    else if (this.finish === undefined) {
      reason = { kind: 'error', failure: { code: 'MALFORMED_STREAM', message: `malformed model stream: it ended after ${this.chunks} chunk(s) without a finish chunk` } }
    } else reason = this.finish
    const response: AssembledResponse = { content: this.partial(), finishReason: reason }
    if (this.usage !== undefined) response.usage = this.usage
    return response
  }
}

function byIndex(a: BlockBuilder, b: BlockBuilder): number {
  return a.index - b.index
}

/** A fresh incremental assembler (see `Assembler`). */
export function createAssembler(): Assembler {
  return new StreamAssembler()
}

/** Assembles a whole chunk sequence (an array or any iterable) at once. */
export function assemble(chunks: Iterable<StreamChunk>): AssembledResponse {
  const assembler = new StreamAssembler()
  for (const chunk of chunks) assembler.push(chunk)
  return assembler.result()
}
