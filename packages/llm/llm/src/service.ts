import { ScopedRegistry, rawEvents, untraced, type RawEvents } from '@deepseek-ai/dsh-scope'
import Schema from 'schemastery'
import type { GenerateOptions, LlmAdapter, LlmCallConfig, LlmRequest, ModelInfo, PreparedCall, StreamRequest } from './adapter'
import { checkCallConfig, effectiveConfig } from './call-config'
import { abortedNow } from './abort-read'
import { Context, Service } from './cordis'
import { LlmError, toLlmFailure } from './failure'
import { forgetLoopRequests, isLoopRequest, loopRequestSet, loopRequests, type LoopRequestEntry, type LoopRequestMeta } from './loop-requests'
import { BoundCall, type AdapterRegistration } from './prepared-call'
import { DONE } from './protocol-stream'
import type { SessionId } from './session-id'
import type { StreamChunk } from './stream'

declare module 'cordis' {
  interface Context {
    llm: LlmService
  }
}

/** What the service's methods work on; kept off the traced service object (see `LlmService`). */
interface LlmCore {
  /** The service's own events: `llm/stream` is dispatched here, whoever calls. */
  readonly events: RawEvents
  readonly adapters: ScopedRegistry<AdapterRegistration>
}

const kCore = Symbol('dsh-llm.core')

/**
 * `ctx.llm`: the model seam. Adapters register per provider name; a call is
 * prepared once (adapter registration, model capabilities, effective config)
 * and dispatched through the `llm/stream` waterfall to the registration it
 * captured.
 *
 * Cordis wraps a service in a tracing proxy so that `this.ctx` is the
 * caller's context; every property read through that proxy costs a few
 * microseconds. The methods therefore read their state through one symbol
 * (which the proxy passes straight through), and the service opts out of
 * per-call method shadowing: model calls are a hot path.
 */
export class LlmService extends Service {
  static readonly Config: Schema<LlmService.Config> = Schema.object({})

  private readonly [kCore]: LlmCore

  constructor(ctx: Context, _config: LlmService.Config = {}) {
    super(ctx, 'llm')
    this[kCore] = { events: rawEvents(ctx), adapters: new ScopedRegistry<AdapterRegistration>() }
    // `this.ctx` stays the caller's context without the shadow; this service
    // reads no other service through it and defines no mixins.
    untraced(this)
  }

  /**
   * Registers `adapter` for each of `providers`, until the caller's fiber is
   * disposed or the returned function is called (R-LLM-1). Registrations of
   * one provider stack: the newest wins, and disposing it uncovers the
   * previous one. Calls already prepared keep the registration they captured.
   * Throws `INVALID_CONFIG` for an empty provider list or an object without
   * a `stream` method.
   */
  registerAdapter(providers: readonly string[], adapter: LlmAdapter): () => void {
    if (!Array.isArray(providers) || providers.length === 0 || !providers.every((p) => typeof p === 'string' && p.length > 0)) {
      throw new LlmError({ code: 'INVALID_CONFIG', message: 'registerAdapter: providers must be a non-empty array of non-empty provider names' })
    }
    if (adapter === null || typeof adapter !== 'object' || typeof adapter.stream !== 'function') {
      throw new LlmError({ code: 'INVALID_CONFIG', message: `registerAdapter(${providers.join(', ')}): the adapter must be an object with a stream(options) method` })
    }
    if (adapter.resolveModel !== undefined && typeof adapter.resolveModel !== 'function') {
      throw new LlmError({ code: 'INVALID_CONFIG', message: `registerAdapter(${providers.join(', ')}): adapter.resolveModel must be a function when set` })
    }
    const names = [...new Set(providers)]
    const registration: AdapterRegistration = Object.freeze({ providers: Object.freeze(names), adapter })
    const { adapters } = this[kCore]
    const dispose = this.ctx.effect(() => {
      const removes = names.map((name) => adapters.add(name, registration))
      return () => {
        for (const remove of removes) remove()
      }
    }, `llm.registerAdapter(${names.join(', ')})`)
    return () => void dispose()
  }

  /** The provider names that currently have an adapter, sorted. */
  providers(): string[] {
    return this[kCore].adapters.keys()
  }

  /**
   * Prepares one call (R-LLM-2): checks the config (`INVALID_CONFIG` without
   * provider and model), resolves the provider's current registration once,
   * asks its `resolveModel` once, validates `reasoningEffort` against the
   * model's declared efforts (`INVALID_CONFIG` listing the accepted ones) and
   * fills `defaultReasoningEffort`. Rejects `ABORTED` when `signal` is or
   * becomes aborted before it resolves. A route with no adapter still
   * prepares (`hasAdapter: false`, config kept as given) so that an
   * `llm/stream` listener can take it over (R-LLM-3).
   */
  prepareCall(config: LlmCallConfig, signal?: AbortSignal): Promise<PreparedCall> {
    try {
      const call = prepare(this[kCore], config, signal)
      return call instanceof Promise ? call : Promise.resolve(call)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /**
   * `prepareCall` without a promise when nothing has to be waited for: the
   * prepared call itself when the adapter has no `resolveModel` or answers it
   * synchronously (or the route has no adapter), a promise of it when
   * `resolveModel` returns one. The checks, the single registration lookup,
   * the single `resolveModel` call and the errors are `prepareCall`'s, but a
   * failure found before any wait is thrown, not returned as a rejection
   * (`INVALID_CONFIG`, `ABORTED` for a signal already aborted, a synchronous
   * `resolveModel` failure). For callers on a hot path: a step with nothing
   * to wait for stays free of promises.
   */
  prepareCallNow(config: LlmCallConfig, signal?: AbortSignal): PreparedCall | Promise<PreparedCall> {
    return prepare(this[kCore], config, signal)
  }

  /**
   * One-shot convenience: prepares a call from `options` and dispatches it.
   * Never throws for provider failures, prepare failures included: they
   * arrive as a terminal `finish` chunk (R-LLM-4). The config fields of
   * `options` are validated like `prepareCall`'s.
   */
  stream(options: GenerateOptions): AsyncIterableIterator<StreamChunk> {
    return new OneShotStream(this[kCore], options)
  }

  /** See `markLoopRequest`. */
  markLoopRequest(request: LlmRequest, meta: LoopRequestMeta): void {
    loopRequestSet.mark(request, meta)
  }

  /** See `isLoopRequest`. */
  isLoopRequest(request: unknown): boolean {
    return isLoopRequest(request)
  }

  /** See `loopRequests`. */
  loopRequests(sessionId: SessionId | string): IterableIterator<LoopRequestEntry> {
    return loopRequests(sessionId)
  }

  /** See `forgetLoopRequests`. */
  forgetLoopRequests(sessionId: SessionId | string): void {
    forgetLoopRequests(sessionId)
  }
}

export namespace LlmService {
  /** `ctx.llm` has no options. */
  export interface Config {}
}

/** `provider/model`, for messages. */
function routeOf(config: LlmCallConfig): string {
  return `${config.provider}/${config.model}`
}

function abortedBeforeDispatch(signal: AbortSignal, route: string): LlmError {
  return new LlmError({ code: 'ABORTED', message: `preparing the model call to ${route} was aborted` }, { cause: signal.reason })
}

/**
 * `prepareCallNow` (and, wrapped in a promise, `prepareCall`). Written without
 * `async`: an adapter whose `resolveModel` answers synchronously (or that has
 * none) prepares in the same tick, with no promise at all. A failure before
 * any wait is thrown. The route's name is built only for an error.
 */
function prepare(core: LlmCore, config: LlmCallConfig, signal: AbortSignal | undefined): PreparedCall | Promise<PreparedCall> {
  checkCallConfig(config)
  if (signal !== undefined && abortedNow(signal)) throw abortedBeforeDispatch(signal, routeOf(config))
  // Resolved exactly once: everything below, and the dispatch, use this registration.
  const registration = core.adapters.get(config.provider)
  if (registration?.adapter.resolveModel === undefined) {
    return new BoundCall(core.events, registration, effectiveConfig(config, undefined), undefined)
  }
  let pending: unknown
  try {
    pending = registration.adapter.resolveModel(config.model)
  } catch (error) {
    throw modelFailure(error, signal)
  }
  if (!(pending instanceof Promise)) {
    if (signal !== undefined && abortedNow(signal)) throw abortedBeforeDispatch(signal, routeOf(config))
    return bind(core, registration, config, pending)
  }
  const route = routeOf(config)
  const settled = signal ? raceAbort(pending, signal, route) : pending
  return settled.then(
    (info: unknown) => {
      if (signal?.aborted) throw abortedBeforeDispatch(signal, route)
      return bind(core, registration, config, info)
    },
    (error: unknown) => {
      throw modelFailure(error, signal)
    },
  )
}

/** A `resolveModel` failure as an `LlmError`: an `LlmError` as is, anything else classified. */
function modelFailure(error: unknown, signal: AbortSignal | undefined): LlmError {
  return error instanceof LlmError ? error : new LlmError(toLlmFailure(error, signal), { cause: error })
}

/** The prepared call, once the adapter's `resolveModel` answered `info`. */
function bind(core: LlmCore, registration: AdapterRegistration, config: LlmCallConfig & { provider: string; model: string }, info: unknown): BoundCall {
  if (info === null || typeof info !== 'object') {
    throw new LlmError({ code: 'UNKNOWN', message: `the adapter for ${routeOf(config)} returned no model info from resolveModel` })
  }
  return new BoundCall(core.events, registration, effectiveConfig(config, info as ModelInfo), info as ModelInfo)
}

/** `value`, or a rejection with `ABORTED` as soon as `signal` aborts, whichever comes first. */
function raceAbort<T>(value: T | Promise<T>, signal: AbortSignal, route: string): Promise<T> {
  if (signal.aborted) return Promise.reject(abortedBeforeDispatch(signal, route))
  if (!(value instanceof Promise)) return Promise.resolve(value)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedBeforeDispatch(signal, route))
    signal.addEventListener('abort', onAbort, { once: true })
    value.then(
      (result) => {
        signal.removeEventListener('abort', onAbort)
        resolve(result)
      },
      (error) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

/** `ctx.llm.stream`: prepare on the first `next()`, then delegate to the prepared call's stream. */
class OneShotStream implements AsyncIterableIterator<StreamChunk> {
  private iterator: AsyncIterator<StreamChunk, undefined> | undefined
  private state: 'idle' | 'preparing' | 'closed' = 'idle'
  /** Settles once the call is prepared and its first pull made (or it failed): pulls made meanwhile follow it, in call order. */
  private prepared: Promise<void> | undefined

  constructor(
    private readonly core: LlmCore,
    private readonly options: GenerateOptions,
  ) {}

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<StreamChunk, undefined>> {
    if (this.iterator !== undefined) return this.iterator.next()
    if (this.state === 'preparing') return this.prepared!.then(() => this.next())
    if (this.state !== 'idle') return Promise.resolve(DONE)
    let opened!: () => void
    this.prepared = new Promise<void>((resolve) => (opened = resolve))
    return this.start(opened)
  }

  return(): Promise<IteratorResult<StreamChunk, undefined>> {
    this.state = 'closed'
    const iterator = this.iterator
    return iterator?.return ? iterator.return() : Promise.resolve(DONE)
  }

  private async start(opened: () => void): Promise<IteratorResult<StreamChunk, undefined>> {
    this.state = 'preparing'
    const options = this.options
    let call: PreparedCall
    try {
      if (options === null || typeof options !== 'object') {
        throw new LlmError({ code: 'INVALID_CONFIG', message: 'ctx.llm.stream: options must be an object with provider, model and messages' })
      }
      const { provider, model, reasoningEffort, maxTokens, temperature } = options
      call = await prepare(this.core, { provider, model, reasoningEffort, maxTokens, temperature }, options.signal)
      // The consumer may have called return() while the call was being prepared.
      if (this.isClosed()) {
        opened()
        return DONE
      }
      const { system, tools, messages, signal, sessionId } = options
      this.iterator = call.stream({ system, tools, messages, signal, sessionId })[Symbol.asyncIterator]()
    } catch (error) {
      opened()
      if (this.isClosed()) return DONE
      this.state = 'closed'
      const signal = options?.signal
      const failure = toLlmFailure(error, signal)
      const reason = signal?.aborted ? { kind: 'aborted' as const } : { kind: 'error' as const, failure }
      return { done: false, value: { type: 'finish', reason } }
    }
    const first = this.iterator.next()
    opened()
    return first
  }

  private isClosed(): boolean {
    return this.state === 'closed'
  }
}
