import type { SessionId } from './session-id'
import type { LlmErrorCode } from './failure'
import type { JsonSchema } from './json'
import type { Message } from './message'
import type { StreamChunk } from './stream'

/** A tool as the model sees it. */
export interface ToolSchema {
  name: string
  description: string
  /** JSON Schema of the arguments object. */
  parameters: JsonSchema
}

/** What an adapter knows about one model. */
export interface ModelInfo {
  id: string
  contextWindow?: number
  maxOutputTokens?: number
  /** The reasoning efforts the model accepts; absent or empty means none. */
  reasoningEfforts?: readonly string[]
  /** The effort used when the call config names none. */
  defaultReasoningEffort?: string
}

/** Retry hints an adapter may publish for `dsh-llm-retry`. */
export interface RetryPolicy {
  /** Retries allowed per failure code; codes not listed use the retry plugin's budgets. */
  budgets?: Partial<Record<LlmErrorCode, number>>
  baseDelayMs?: number
  maxDelayMs?: number
}

/** One model call, as an adapter receives it. */
export interface GenerateOptions {
  provider: string
  model: string
  system?: string
  tools?: readonly ToolSchema[]
  /**
   * The conversation. Entries are frozen. From the agent loop it is a
   * session's history snapshot (see `Session.deriveMessages`): an immutable
   * array that never changes, so an adapter may keep it as it is; every write
   * to it throws a `TypeError` (an adapter that wants another list, e.g. with
   * a system message in front, builds a new array). `historyOf(messages)`
   * links it to the session's history, for adapters that process requests
   * incrementally. Reading it with `for…of` or the array methods is as fast as
   * on an array; an index loop over a long snapshot costs a proxy trap per
   * read.
   */
  messages: readonly Message[]
  reasoningEffort?: string
  maxTokens?: number
  temperature?: number
  signal?: AbortSignal
  /** The session the call belongs to, for adapters that key caches or logs by it. */
  sessionId?: SessionId
}

/** A model call without its signal: the frozen record of what was sent. */
export type LlmRequest = Omit<GenerateOptions, 'signal'>

/**
 * A provider implementation.
 *
 * Contract: `stream` follows the `StreamChunk` protocol. It should encode
 * provider failures as a final `finish` chunk of kind `error` (or `aborted`)
 * with a classified `LlmFailure`; if it throws instead (synchronously, or from
 * the iterator), `ctx.llm` classifies the throw into such a chunk. It must stop
 * promptly when `signal` aborts. It must never put credentials in a failure
 * message.
 *
 * In-memory fast path: when the object `stream` returns is also a synchronous
 * `Iterable<StreamChunk>` (it has `[Symbol.iterator]` as well), `ctx.llm`
 * pulls that iterator instead, one chunk per consumer `next()`, without
 * awaiting it: one promise per chunk instead of two, and none when the
 * consumer reads it with `pump` (the agent loop does). For adapters whose chunks
 * are already at hand (a scripted model, a replay cache); its `next()` must
 * never block. Everything else holds as for the asynchronous iterator: a throw
 * is classified, `return()` is called when the stream stops early.
 *
 * Chunks at hand: the asynchronous iterator may answer `next()` with a plain
 * (non-thenable) `IteratorResult` instead of a promise when the chunk is
 * already at hand, i.e. decoded from a network read already done (the HTTP
 * adapters answer so for the rest of each read's chunks, see
 * `BatchedChunks`), and with a promise whenever it has to wait. It must never block to produce a plain result. A consumer that
 * `await`s each answer (`for await`, `yield*`) sees the same chunks in the
 * same order; one that calls `.then` on it directly does not, so read an
 * adapter's stream with `await` or through `ctx.llm`. `ctx.llm`'s `pump` takes such a result without a promise; its
 * `next()` hands it on as a resolved promise. Aborts and early stops are
 * unchanged: the guard reads the signal before each chunk, plain or not,
 * and calls `return()` when it stops the stream.
 */
export interface LlmAdapter {
  stream(options: GenerateOptions): AsyncIterable<StreamChunk>
  /** Model capabilities; called once per prepared call. */
  resolveModel?(model: string): ModelInfo | Promise<ModelInfo>
  retryPolicy?: RetryPolicy
}

/** The per-call knobs a caller (or an `agent/request` listener) sets. */
export interface LlmCallConfig {
  provider?: string
  model?: string
  reasoningEffort?: string
  maxTokens?: number
  temperature?: number
}

/** What a prepared call streams: everything but the config. */
export interface StreamRequest {
  system?: string
  tools?: readonly ToolSchema[]
  messages: readonly Message[]
  signal?: AbortSignal
  sessionId?: SessionId
}

/**
 * A call bound to one exact adapter registration (R-LLM-2). The registration is
 * resolved once, by `ctx.llm.prepareCall`; a registration replaced afterwards
 * (hot reload) does not affect this call's header or dispatch.
 */
export interface PreparedCall {
  /** The effective config: validated, defaults filled. `provider` and `model` are always set. */
  readonly config: Readonly<LlmCallConfig & { provider: string; model: string }>
  /** The model's capabilities, when the adapter reports them. */
  readonly model?: ModelInfo
  /** Whether an adapter was registered for the route when the call was prepared. */
  readonly hasAdapter: boolean
  /**
   * Dispatches through the `llm/stream` waterfall and then the captured
   * adapter. Never throws for provider failures: they arrive as a final
   * `finish` chunk of kind `error`/`aborted` (R-LLM-4).
   *
   * The stream `ctx.llm` returns also has `pump(sink)`, the agent loop's way
   * to read it: each chunk is handed to `sink` synchronously and in order
   * (`sink` returns `false` to stop; a throw stops and is rethrown once the
   * adapter is stopped), chunks already at hand in one synchronous loop and no
   * promise per chunk beyond the adapter's own; it returns `undefined` when
   * the stream finished synchronously, else a promise of its end. Same
   * protocol checks as iteration; use one or the other, once.
   */
  stream(request: StreamRequest): AsyncIterable<StreamChunk>
}
