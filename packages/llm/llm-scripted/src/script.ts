import type { JsonObject, LlmFailure, LlmRequest, StreamChunk, TokenUsage } from '@deepseek-ai/dsh-llm'

/** One tool call the scripted model makes. */
export interface ScriptToolCall {
  /** The call id; defaults to `call_<callIndex>_<position>`, deterministic per model call. */
  id?: string
  name: string
  /**
   * The arguments: an object (streamed as its JSON text) or raw JSON text,
   * streamed exactly as given (so a test can send malformed JSON). Defaults to `{}`.
   */
  arguments?: JsonObject | string
}

/**
 * What the scripted model answers to one model call. The chunks stream in the
 * order a real provider sends them: reasoning (block 0), text (next block),
 * tool calls (one block each), `usage`, then the ending.
 */
export interface ScriptReply {
  /** Reasoning text, chunked like `text`; an array gives the exact deltas. */
  reasoning?: string | readonly string[]
  /** Opaque provider state carried by the last reasoning delta. */
  signature?: string
  /** Answer text, chunked by the model's `textChunking`; an array gives the exact deltas. */
  text?: string | readonly string[]
  toolCalls?: readonly ScriptToolCall[]
  /** The usage snapshot; `false` sends none. Defaults to an estimate (about 4 characters a token). */
  usage?: TokenUsage | false
  /** The finish reason; defaults to `tool-calls` when there are tool calls, else `stop`. */
  finish?: 'stop' | 'tool-calls' | 'max-tokens'
  /** End with `finish { kind: 'error', failure }` instead of a normal finish. */
  error?: LlmFailure
  /**
   * Throw from the stream right after the content (before `usage`), as a
   * provider whose connection breaks: an `LlmFailure` is thrown as an
   * `LlmError`, a string as a plain `Error`.
   */
  throw?: LlmFailure | string
  /** End after the content and usage without any `finish` chunk. */
  noFinish?: boolean
  /**
   * The exact chunks to stream, verbatim (nothing is added, not even a
   * finish); only `throw` combines with it (thrown after the chunks).
   */
  chunks?: readonly StreamChunk[]
}

/**
 * One entry of a script: a text answer, or a reply. A reply with an `answer`
 * is a tool round: the reply is one model call (typically tool calls) and
 * `answer` is what the next call answers, once the tool results are in;
 * answers nest for several rounds.
 *
 * ```ts
 * ['Hello!', { toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }], answer: 'Two files.' }]
 * ```
 * is three model calls: `Hello!`; a `list_dir` call; `Two files.`.
 */
export type ScriptTurn = string | (ScriptReply & { answer?: ScriptTurn })

/**
 * The programmable mode: computes the reply to model call `callIndex`
 * (0-based over the model's lifetime) from the request it received.
 */
export type Responder = (request: LlmRequest, callIndex: number) => string | ScriptReply | Promise<string | ScriptReply>

/** The error of a bad script, reply or control request. */
export class ScriptError extends Error {
  override readonly name = 'ScriptError'
  constructor(
    readonly code: 'INVALID_SCRIPT' | 'INVALID_CONTROL',
    message: string,
  ) {
    super(message)
  }
}

const replyKeys = new Set(['reasoning', 'signature', 'text', 'toolCalls', 'usage', 'finish', 'error', 'throw', 'noFinish', 'chunks'])
const finishes = new Set(['stop', 'tool-calls', 'max-tokens'])

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function isTextInput(value: unknown): boolean {
  if (typeof value === 'string') return true
  if (!Array.isArray(value)) return false
  // A plain loop: a responder's reply is checked on every call, deltas and all.
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== 'string') return false
  return true
}

function isFailure(value: unknown): value is LlmFailure {
  return isObject(value) && typeof value.code === 'string' && value.code.length > 0 && typeof value.message === 'string'
}

const endingKeys = ['error', 'throw', 'noFinish'] as const

/** Whether an ending field is set (`noFinish: false` is not). */
const ends = (value: unknown): boolean => value !== undefined && value !== false

/** The first problem of one scripted tool call, as a path suffix and message (`.name must be …`), or `undefined`. */
function toolCallProblem(call: unknown): string | undefined {
  if (!isObject(call)) return ' must be an object with a name'
  if (typeof call.name !== 'string' || call.name.length === 0) return '.name must be a non-empty string'
  if (call.id !== undefined && (typeof call.id !== 'string' || call.id.length === 0)) return '.id must be a non-empty string when set'
  if (call.arguments !== undefined && typeof call.arguments !== 'string' && !isObject(call.arguments)) return '.arguments must be an object or a JSON string'
  return undefined
}

/**
 * The first problem of one reply, with its path, or `undefined`. Every
 * message starts with `path`, so a caller may pass `''` and prefix the
 * message only when there is one (a responder's reply is checked on every
 * call: no path is built for a good one).
 */
export function replyProblem(reply: unknown, path: string, allowAnswer: boolean): string | undefined {
  if (typeof reply === 'string') return undefined
  if (!isObject(reply)) return `${path} must be a string or a reply object`
  // Indexed: no iterator object per reply in unoptimized code.
  const keys = Object.keys(reply)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    if (!replyKeys.has(key) && !(allowAnswer && key === 'answer')) {
      return `${path} has an unknown field "${key}"${key === 'answer' ? ' (a responder answers one call at a time)' : ''}`
    }
  }
  const r = reply
  if (r.reasoning !== undefined && !isTextInput(r.reasoning)) return `${path}.reasoning must be a string or an array of strings`
  if (r.text !== undefined && !isTextInput(r.text)) return `${path}.text must be a string or an array of strings`
  if (r.signature !== undefined && typeof r.signature !== 'string') return `${path}.signature must be a string`
  if (r.toolCalls !== undefined) {
    if (!Array.isArray(r.toolCalls)) return `${path}.toolCalls must be an array`
    for (let i = 0; i < r.toolCalls.length; i++) {
      const problem = toolCallProblem(r.toolCalls[i])
      if (problem !== undefined) return `${path}.toolCalls[${i}]${problem}`
    }
  }
  if (r.usage !== undefined && r.usage !== false) {
    if (!isObject(r.usage) || typeof r.usage.inputTokens !== 'number' || typeof r.usage.outputTokens !== 'number') {
      return `${path}.usage must be false or { inputTokens, outputTokens, … }`
    }
  }
  if (r.finish !== undefined && !finishes.has(r.finish as string)) return `${path}.finish must be one of stop, tool-calls, max-tokens`
  if (r.error !== undefined && !isFailure(r.error)) return `${path}.error must be an LlmFailure { code, message }`
  if (r.throw !== undefined && typeof r.throw !== 'string' && !isFailure(r.throw)) return `${path}.throw must be a message or an LlmFailure`
  if (r.noFinish !== undefined && typeof r.noFinish !== 'boolean') return `${path}.noFinish must be a boolean`
  // Three reads for the usual reply with no ending field: this runs on every responder reply.
  if (r.error !== undefined || r.throw !== undefined || r.noFinish !== undefined) {
    const endings = endingKeys.filter((key) => ends(r[key]))
    if (endings.length > 1) return `${path} sets ${endings.join(' and ')}: a reply ends one way`
    if (r.finish !== undefined && endings.length > 0) return `${path} sets finish and ${endings[0]}: a reply ends one way`
  }
  if (r.chunks !== undefined) {
    if (!Array.isArray(r.chunks) || !r.chunks.every((chunk) => isObject(chunk) && typeof chunk.type === 'string')) {
      return `${path}.chunks must be an array of stream chunks`
    }
    const mixed = Object.keys(r).filter((key) => key !== 'chunks' && key !== 'throw' && key !== 'answer')
    if (mixed.length > 0) return `${path} sets chunks with ${mixed.join(', ')}: verbatim chunks combine only with throw`
  }
  if (allowAnswer && r.answer !== undefined) return replyProblem(r.answer, `${path}.answer`, true)
  return undefined
}

/** Throws `INVALID_SCRIPT` naming the first bad entry of `turns`. */
export function checkScript(turns: unknown): asserts turns is readonly ScriptTurn[] {
  if (!Array.isArray(turns)) throw new ScriptError('INVALID_SCRIPT', 'the script must be an array of turns')
  for (let i = 0; i < turns.length; i++) {
    const problem = replyProblem(turns[i], `script[${i}]`, true)
    if (problem) throw new ScriptError('INVALID_SCRIPT', problem)
  }
}

/** The replies of `turns`, one per model call, in order: tool rounds unfold into their answers. */
export function unfold(turns: readonly ScriptTurn[]): Array<string | ScriptReply> {
  const replies: Array<string | ScriptReply> = []
  for (const entry of turns) {
    let turn: ScriptTurn | undefined = entry
    while (turn !== undefined) {
      if (typeof turn === 'string') {
        replies.push(turn)
        break
      }
      const { answer, ...reply }: ScriptReply & { answer?: ScriptTurn } = turn
      replies.push(reply)
      turn = answer
    }
  }
  return replies
}
