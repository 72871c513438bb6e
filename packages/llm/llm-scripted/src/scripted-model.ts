import type { GenerateOptions, LlmAdapter, LlmRequest, ModelInfo, StreamChunk } from '@deepseek-ai/dsh-llm'
import { ControlledCall } from './controlled-call'
import { collectPlan, estimatesUsage, failing, replyChunks, type ChunkingOptions } from './plan'
import { InstantReplyStream, ReplyStream } from './reply-stream'
import { checkScript, replyProblem, ScriptError, unfold, type Responder, type ScriptReply, type ScriptTurn } from './script'
import { InputCounter } from './usage-estimate'
import { checkUsageOption, type UsageOption } from './usage-option'

/** How a `ScriptedModel` answers and streams. */
export interface ScriptedModelOptions {
  /** Replies consumed one model call at a time (see `ScriptTurn`). */
  script?: readonly ScriptTurn[]
  /** Answers the calls the script does not cover (the programmable mode). */
  respond?: Responder
  /** A delay before each chunk; `0` (the default) never touches a timer. */
  chunkDelayMs?: number
  /** `'word'` (default): one text delta per word; a number: deltas of that many characters. */
  textChunking?: 'word' | number
  /** Tool-call arguments stream in fragments of this many characters (default 8). */
  argumentChunkSize?: number
  /** What `resolveModel` reports, by model id; unknown ids get `{ id }` (no reasoning efforts). */
  models?: readonly ModelInfo[]
  /** Whether to record every request in `requests` (default true; benchmarks turn it off). */
  record?: boolean
  /**
   * The usage a call reports when its reply gives none: `true` (the default)
   * an estimate (about 4 characters a token, the input counted when the call
   * starts); `false` no usage chunk; a `TokenUsage` that usage on every call,
   * as a provider's server reports it (deterministic, and nothing is counted:
   * the request's history is never read). A reply's own `usage` wins.
   * Throws `INVALID_SCRIPT` for anything else (see `UsageOption`).
   */
  usage?: UsageOption
}

/**
 * The embedded offline model: an `LlmAdapter` that answers from a script, a
 * responder function, or a test's hand (`control()`), streaming what a real
 * provider would. Deterministic: the same calls get the same chunks, tool
 * call ids included (`call_<callIndex>_<position>` unless scripted).
 */
export class ScriptedModel implements LlmAdapter {
  private readonly replies: Array<string | ScriptReply> = []
  private cursor = 0
  private readonly respond: Responder | undefined
  private readonly chunkDelayMs: number
  private readonly chunking: ChunkingOptions
  private readonly models = new Map<string, ModelInfo>()
  private readonly recording: boolean
  private readonly recorded: LlmRequest[] = []
  private readonly controls = new Map<number, ControlledCall>()
  private readonly input = new InputCounter()
  private callCount = 0

  constructor(options: ScriptedModelOptions = {}) {
    const { script = [], respond, chunkDelayMs = 0, textChunking = 'word', argumentChunkSize = 8, models = [], record = true, usage = true } = options
    checkScript(script)
    if (respond !== undefined && typeof respond !== 'function') throw new ScriptError('INVALID_SCRIPT', 'respond must be a function (request, callIndex) => reply')
    if (!(Number.isFinite(chunkDelayMs) && chunkDelayMs >= 0)) throw new ScriptError('INVALID_SCRIPT', `chunkDelayMs must be a number >= 0 (got ${String(chunkDelayMs)})`)
    if (textChunking !== 'word' && !(Number.isSafeInteger(textChunking) && textChunking > 0)) {
      throw new ScriptError('INVALID_SCRIPT', `textChunking must be 'word' or a positive integer (got ${String(textChunking)})`)
    }
    if (!(Number.isSafeInteger(argumentChunkSize) && argumentChunkSize > 0)) {
      throw new ScriptError('INVALID_SCRIPT', `argumentChunkSize must be a positive integer (got ${String(argumentChunkSize)})`)
    }
    for (const model of models) {
      if (model === null || typeof model !== 'object' || typeof model.id !== 'string' || model.id.length === 0) {
        throw new ScriptError('INVALID_SCRIPT', 'each entry of models must be a ModelInfo with a non-empty id')
      }
      this.models.set(model.id, Object.freeze({ ...model }))
    }
    const reported = checkUsageOption(usage)
    this.replies.push(...unfold(script))
    this.respond = respond
    this.chunkDelayMs = chunkDelayMs
    this.chunking = { textChunking, argumentChunkSize, usage: reported }
    this.recording = record
  }

  /** Every request received, in order: copies taken at receipt (messages and tools arrays included). */
  get requests(): readonly LlmRequest[] {
    return this.recorded
  }

  /** How many model calls started so far (the next call's 0-based index). */
  get calls(): number {
    return this.callCount
  }

  /** How many scripted replies are left. */
  get remaining(): number {
    return this.replies.length - this.cursor
  }

  /** Appends turns to the script. Throws `INVALID_SCRIPT` for a bad turn, appending nothing. */
  enqueue(...turns: ScriptTurn[]): void {
    checkScript(turns)
    this.replies.push(...unfold(turns))
  }

  /**
   * Takes control of model call `index` (0-based), or of the next call not
   * started and not yet controlled. The call still consumes its scripted
   * reply, which `step()` and `release()` play. Throws `INVALID_CONTROL` for
   * a call that already started or is already controlled.
   */
  control(index?: number): ControlledCall {
    let at = index
    if (at === undefined) {
      at = this.callCount
      while (this.controls.has(at)) at++
    }
    if (!Number.isSafeInteger(at) || at < 0) throw new ScriptError('INVALID_CONTROL', `control(index): index must be a non-negative integer (got ${String(at)})`)
    if (at < this.callCount) throw new ScriptError('INVALID_CONTROL', `model call #${at} already started; take control before the call is made`)
    if (this.controls.has(at)) throw new ScriptError('INVALID_CONTROL', `model call #${at} is already controlled`)
    const call = new ControlledCall(at)
    this.controls.set(at, call)
    return call
  }

  resolveModel(model: string): ModelInfo {
    return this.models.get(model) ?? { id: model }
  }

  stream(options: GenerateOptions): AsyncIterable<StreamChunk> {
    const callIndex = this.callCount++
    const control = this.controls.size === 0 ? undefined : this.controls.get(callIndex)
    let request: LlmRequest | undefined
    if (this.recording || control) {
      request = record(options)
      if (this.recording) this.recorded.push(request)
    }
    const reply = this.cursor < this.replies.length ? this.replies[this.cursor++] : undefined
    if (control !== undefined) {
      this.controls.delete(callIndex)
      control.begin(request!, options.signal)
      let answered: Promise<Iterator<StreamChunk, void, undefined>>
      try {
        answered = Promise.resolve(this.answer(reply, options, callIndex))
      } catch (error) {
        answered = Promise.reject(error)
      }
      answered.then(
        (chunks) => control.setPlan(collectPlan(chunks)),
        (error: unknown) => control.setPlan({ chunks: [], error }),
      )
      return control.run()
    }
    let chunks: Iterator<StreamChunk, void, undefined> | Promise<Iterator<StreamChunk, void, undefined>>
    try {
      chunks = this.answer(reply, options, callIndex)
    } catch (error) {
      chunks = failing(error)
    }
    if (chunks instanceof Promise || this.chunkDelayMs > 0) return new ReplyStream(chunks, options.signal, this.chunkDelayMs)
    return new InstantReplyStream(chunks, options.signal)
  }

  /**
   * The chunks of call `callIndex`: its scripted reply, else the responder's
   * (checked; a promise when the responder answers with one), else the
   * exhausted-script error. Throws what a synchronous responder throws.
   */
  private answer(
    reply: string | ScriptReply | undefined,
    options: GenerateOptions,
    callIndex: number,
  ): Iterator<StreamChunk, void, undefined> | Promise<Iterator<StreamChunk, void, undefined>> {
    if (reply !== undefined) return this.chunksOf(reply, options, callIndex)
    if (this.respond === undefined) return this.exhausted(callIndex)
    const answer = this.respond(options, callIndex)
    if (answer instanceof Promise) return answer.then((settled) => this.checked(settled, options, callIndex))
    return this.checked(answer, options, callIndex)
  }

  private chunksOf(reply: string | ScriptReply, options: GenerateOptions, callIndex: number): Iterator<StreamChunk, void, undefined> {
    // Counted at receipt, like the request record: the history may grow while the call streams.
    const inputChars = estimatesUsage(reply, this.chunking) ? this.input.chars(options) : 0
    return replyChunks(reply, callIndex, inputChars, this.chunking)
  }

  /** The chunks of a responder's reply; throws `INVALID_SCRIPT` for a bad one. */
  private checked(answer: string | ScriptReply, options: GenerateOptions, callIndex: number): Iterator<StreamChunk, void, undefined> {
    const problem = replyProblem(answer, '', false)
    if (problem !== undefined) throw new ScriptError('INVALID_SCRIPT', `the responder's reply to call #${callIndex}${problem}`)
    return this.chunksOf(answer, options, callIndex)
  }

  private exhausted(callIndex: number): Iterator<StreamChunk, void, undefined> {
    const message = `the scripted model has no reply for call #${callIndex}: its script had ${this.replies.length} replies and no responder is set; add turns (script, enqueue()) or set respond`
    return [{ type: 'finish', reason: { kind: 'error', failure: { code: 'BAD_REQUEST', message } } } satisfies StreamChunk][Symbol.iterator]()
  }
}

/** A copy of what the model was asked, taken at receipt: the caller's arrays may change later. */
function record(options: GenerateOptions): LlmRequest {
  const request: LlmRequest = { provider: options.provider, model: options.model, messages: options.messages.slice() }
  if (options.system !== undefined) request.system = options.system
  if (options.tools !== undefined) request.tools = options.tools.slice()
  if (options.reasoningEffort !== undefined) request.reasoningEffort = options.reasoningEffort
  if (options.maxTokens !== undefined) request.maxTokens = options.maxTokens
  if (options.temperature !== undefined) request.temperature = options.temperature
  if (options.sessionId !== undefined) request.sessionId = options.sessionId
  return request
}
