import type { GenerateOptions, ModelInfo, PreparedCall } from './adapter'
import type { StreamChunk } from './stream'

/**
 * One model call as `llm/stream` listeners see it. The descriptor and its
 * `options` are frozen: a listener observes, wraps or replaces the stream, it
 * does not rewrite the request (the request was already logged by the loop,
 * and the invariant companion compares it with the log).
 */
export interface LlmStreamCall {
  /**
   * Exactly what the captured adapter receives. From the agent loop,
   * `options.messages` is a session's immutable history snapshot: a listener
   * may keep it; writes to it throw.
   */
  readonly options: Readonly<GenerateOptions>
  /** The effective config of the prepared call (validated, defaults filled). */
  readonly config: PreparedCall['config']
  /** The model's capabilities, when the adapter reported them. */
  readonly model?: ModelInfo
  /**
   * Whether an adapter was registered for the route when the call was
   * prepared. When it is `false`, calling `next()` yields a terminal `finish`
   * of kind `error` with code `NO_ADAPTER`: a listener that takes the route
   * over returns its own stream instead.
   */
  readonly hasAdapter: boolean
}

declare module 'cordis' {
  interface Events {
    /**
     * Middleware around every model call dispatched by `ctx.llm`
     * (`PreparedCall.stream` and the one-shot `ctx.llm.stream`). A listener
     * receives the call descriptor and `next`, which returns the downstream
     * stream (the innermost step is the adapter registration captured by
     * `prepareCall`), and returns an `AsyncIterable<StreamChunk>`: it may
     * observe or transform the chunks of `next()`, or short-circuit by not
     * calling `next()` (for example to serve a route that has no adapter).
     * The first registered listener is outermost. Dispatch is scope-filtered
     * by the request's `sessionId` when it has one, so a listener registered
     * in an agent's scoped context sees only that agent's calls.
     *
     * Contract: adapter failures reach listeners already classified, as a
     * terminal `finish` chunk; what a listener returns is still held to the
     * stream protocol (chunks after `finish` are dropped, a missing `finish`
     * is synthesized), but an error a listener throws is not a provider
     * failure: it propagates to the consumer of the stream.
     * @mode waterfall
     */
    'llm/stream'(call: LlmStreamCall, next: () => AsyncIterable<StreamChunk>): AsyncIterable<StreamChunk>
  }
}
