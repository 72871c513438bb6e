import { heard, subjectFilter, type RawEvents } from '@deepseek-ai/dsh-scope'
import type { GenerateOptions, LlmAdapter, ModelInfo, PreparedCall, StreamRequest } from './adapter'
import type { LlmStreamCall } from './events'
import { LlmError } from './failure'
import { abortedNow } from './abort-read'
import type { ChunkSink, ChunkTaker } from './chunk-sink'
import { DONE, ProtocolStream, type StreamSource } from './protocol-stream'
import type { Mutable } from './records'
import type { StreamChunk } from './stream'

/**
 * One `registerAdapter` call. Its identity is what a prepared call captures:
 * the same adapter registered twice makes two registrations.
 */
export interface AdapterRegistration {
  readonly providers: readonly string[]
  readonly adapter: LlmAdapter
}

type EffectiveConfig = PreparedCall['config']

/** The `PreparedCall` that `ctx.llm.prepareCall` hands out. */
export class BoundCall implements PreparedCall {
  // Fields are `declare`d and set in the constructor (no per-construction field initializer; see `ProtocolStream`).
  declare readonly hasAdapter: boolean
  /** Dispatches `llm/stream`: the service's own events, not a caller's context. */
  private declare readonly events: RawEvents
  private declare readonly registration: AdapterRegistration | undefined
  declare readonly config: EffectiveConfig
  declare readonly model: ModelInfo | undefined

  constructor(events: RawEvents, registration: AdapterRegistration | undefined, config: EffectiveConfig, model: ModelInfo | undefined) {
    this.events = events
    this.registration = registration
    this.config = config
    this.model = model
    this.hasAdapter = registration !== undefined
    Object.freeze(this)
  }

  stream(request: StreamRequest): AsyncIterableIterator<StreamChunk> {
    if (request === null || typeof request !== 'object' || !Array.isArray(request.messages)) {
      throw new LlmError({ code: 'INVALID_CONFIG', message: 'PreparedCall.stream: request.messages must be an array of messages' })
    }
    return new CallStream(this.events, this.registration, this.config, this.model, generateOptions(this.config, request))
  }
}

/**
 * The adapter's view of one call: config and request merged, undefined fields
 * left out, frozen. Made by a constructor (`OptionsRecord`), not a literal
 * grown field by field: a three-field literal holds the other fields out of
 * the object (one more allocation per model call) and its allocation site is
 * one more V8 may pretenure mid-session; the constructor's object holds them
 * all in itself. Still a plain object, with the literal's keys in its order.
 */
function generateOptions(config: EffectiveConfig, request: StreamRequest): GenerateOptions {
  return Object.freeze(new OptionsRecord(config, request))
}

/** `GenerateOptions` (unfrozen), a plain object without an allocation site (see `records.ts`). */
const OptionsRecord = function (this: Mutable<GenerateOptions>, config: EffectiveConfig, request: StreamRequest) {
  this.provider = config.provider
  this.model = config.model
  this.messages = request.messages
  if (request.system !== undefined) this.system = request.system
  if (request.tools !== undefined) this.tools = request.tools
  if (config.reasoningEffort !== undefined) this.reasoningEffort = config.reasoningEffort
  if (config.maxTokens !== undefined) this.maxTokens = config.maxTokens
  if (config.temperature !== undefined) this.temperature = config.temperature
  if (request.signal !== undefined) this.signal = request.signal
  if (request.sessionId !== undefined) this.sessionId = request.sessionId
} as unknown as new (config: EffectiveConfig, request: StreamRequest) => GenerateOptions
OptionsRecord.prototype = Object.prototype

/**
 * The stream of one dispatch. Lazy: the `llm/stream` waterfall runs on the
 * first `next()`, so an unconsumed stream costs nothing and a middleware throw
 * surfaces where the consumer iterates. Iterating it a second time yields
 * nothing (it is its own iterator, like an async generator).
 */
class CallStream implements AsyncIterableIterator<StreamChunk> {
  // Fields are `declare`d and set in the constructor (no per-construction field initializer; see `ProtocolStream`).
  private declare iterator: ProtocolStream | undefined
  private declare closed: boolean
  private declare readonly events: RawEvents
  private declare readonly registration: AdapterRegistration | undefined
  private declare readonly config: EffectiveConfig
  private declare readonly model: ModelInfo | undefined
  private declare readonly options: GenerateOptions

  constructor(events: RawEvents, registration: AdapterRegistration | undefined, config: EffectiveConfig, model: ModelInfo | undefined, options: GenerateOptions) {
    this.iterator = undefined
    this.closed = false
    this.events = events
    this.registration = registration
    this.config = config
    this.model = model
    this.options = options
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<StreamChunk, undefined>> {
    if (this.iterator !== undefined) return this.iterator.next()
    if (this.closed) return Promise.resolve(DONE)
    try {
      this.iterator = this.dispatch()
    } catch (error) {
      this.closed = true
      return Promise.reject(error)
    }
    return this.iterator.next()
  }

  /**
   * Reads the whole stream into `sink` without a promise per chunk (see
   * `ProtocolStream.pump`): `undefined` when it finished synchronously, else
   * a promise that settles when it finishes. A `llm/stream` middleware's
   * throw, or the sink's, is thrown (or rejects). Call it once, instead of
   * iterating. `sinkChecks`: see `ProtocolStream.pump` (the call's own
   * signal, when the sink checks it before each chunk itself).
   */
  pump(sink: ChunkSink | ChunkTaker, sinkChecks?: AbortSignal): Promise<void> | undefined {
    if (this.iterator === undefined) {
      if (this.closed) return undefined
      try {
        this.iterator = this.dispatch()
      } catch (error) {
        this.closed = true
        throw error
      }
    }
    return this.iterator.pump(sink, sinkChecks)
  }

  return(): Promise<IteratorResult<StreamChunk, undefined>> {
    this.closed = true
    const iterator = this.iterator
    if (iterator === undefined) return Promise.resolve(DONE)
    return typeof iterator.return === 'function' ? iterator.return() : Promise.resolve(DONE)
  }

  private dispatch(): ProtocolStream {
    const { registration, options } = this
    const adapterStream = new ProtocolStream(new AdapterSource(registration, options), true)
    // Nobody listens: the waterfall would only call `inner`, so skip building its descriptor.
    if (!heard(this.events, 'llm/stream')) return adapterStream
    const call: LlmStreamCall = Object.freeze({
      options,
      config: this.config,
      model: this.model,
      hasAdapter: registration !== undefined,
    })
    // Typed by the `llm/stream` declaration, but a listener may return anything: checked below.
    const result: unknown = options.sessionId === undefined
      ? this.events.waterfall('llm/stream', call, () => adapterStream)
      : this.events.waterfall(subjectFilter(options.sessionId), 'llm/stream', call, () => adapterStream)
    // No listener wrapped the stream: the adapter guard already holds it to the protocol.
    if (result === adapterStream) return adapterStream
    const route = routeOf(options)
    if (!isAsyncIterable(result)) {
      throw new LlmError({
        code: 'MALFORMED_STREAM',
        message: `an llm/stream listener returned ${result === null ? 'null' : typeof result} instead of an AsyncIterable for ${route}`,
      })
    }
    return new ProtocolStream({ route, signal: options.signal, open: () => result }, false)
  }
}

/**
 * The adapter's stream as a `ProtocolStream` source. A class with the route
 * built on demand, not an object literal with an `open` closure and the
 * route's string: one object per model call instead of three, and the route
 * is only read to word a failure.
 */
class AdapterSource implements StreamSource {
  declare readonly signal: AbortSignal | undefined
  private declare readonly registration: AdapterRegistration | undefined
  private declare readonly options: GenerateOptions

  constructor(registration: AdapterRegistration | undefined, options: GenerateOptions) {
    this.signal = options.signal
    this.registration = registration
    this.options = options
  }

  get route(): string {
    return routeOf(this.options)
  }

  open(): AsyncIterable<StreamChunk> {
    const { signal, registration, options } = this
    if (signal !== undefined && abortedNow(signal)) {
      throw new LlmError({ code: 'ABORTED', message: `the model call to ${routeOf(options)} was aborted before dispatch` })
    }
    if (registration === undefined) {
      throw new LlmError({
        code: 'NO_ADAPTER',
        message: `no adapter is registered for provider "${options.provider}" and no llm/stream listener handled ${routeOf(options)}; mount an adapter plugin for it`,
      })
    }
    return registration.adapter.stream(options)
  }
}

/** `provider/model`, for failure messages. */
function routeOf(options: GenerateOptions): string {
  return `${options.provider}/${options.model}`
}

function isAsyncIterable(value: unknown): value is AsyncIterable<StreamChunk> {
  return value !== null && typeof value === 'object' && typeof (value as AsyncIterable<StreamChunk>)[Symbol.asyncIterator] === 'function'
}
