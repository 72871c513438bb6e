import {
  toLlmFailure,
  type GenerateOptions,
  type LlmAdapter,
  type LlmFailure,
  type ModelInfo,
  type StreamChunk,
} from '@deepseek-ai/dsh-llm'
import { createParser } from 'eventsource-parser'
import type { PresetName, ProviderConfig } from './config'
import { causeOf, Exchange, type ReadResult } from './exchange'
import { httpFailure, streamErrorFailure, type FailureContext } from './failures'
import { apiKeyProblem, resolveProvider, type ResolvedProvider } from './provider'
import { ContentRedactor, Secrets } from './redact'
import { requestBody } from './request-body'
import { StreamDecoder } from './stream-decoder'

/** Construction options that are not configuration. */
export interface OpenAiAdapterOptions {
  /** The clock used to turn a `retry-after` HTTP date into milliseconds. Defaults to `Date.now`. */
  now?: () => number
  /** Where `apiKeyEnv` is looked up, at each call. Defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>
}

/** Where a call's API key comes from, and whether it can be used. */
interface KeyLookup {
  key?: string
  /** Where the key comes from, for messages (never the key). */
  source?: string
  /** The unset environment variable. */
  missing?: string
  /** Why the key cannot be sent in a header. */
  problem?: string
}

const errorFinish = (failure: LlmFailure): StreamChunk => ({ type: 'finish', reason: { kind: 'error', failure } })
const abortedFinish = (): StreamChunk => ({ type: 'finish', reason: { kind: 'aborted' } })

/** How much of a malformed payload a failure message quotes. */
const maxSnippet = 200

const withRequestId = (requestId: string | undefined) => (requestId ? { requestId } : {})

/**
 * An `LlmAdapter` for one OpenAI-compatible chat-completions endpoint
 * (DeepSeek, OpenAI, vLLM, Ollama, llama.cpp, …), streaming over Node's
 * `fetch` with server-sent events.
 *
 * Contract: `stream` never throws for anything the provider or the network
 * does. Every failure, including a refused request body, arrives as the final
 * `finish` chunk of kind `error` with a classified `LlmFailure`; the caller's
 * abort arrives as `{ kind: 'aborted' }` and closes the connection. A stream
 * abandoned by its consumer (`return()`) also closes the connection.
 *
 * Nothing the adapter yields carries a credential: failure messages and
 * request ids lose the API key, credential header values, anything shaped
 * like a key or a `Bearer` token, and URL userinfo; model output loses the
 * exact key and credential header values, even split across deltas (see
 * `ContentRedactor`); `resolveModel` answers are redacted too.
 */
export class OpenAiAdapter implements LlmAdapter {
  /** The provider configuration with preset and defaults applied. */
  readonly config: ResolvedProvider
  private readonly now: () => number
  private readonly env: Readonly<Record<string, string | undefined>>

  /** Throws `OpenAiConfigError` when the configuration cannot work. */
  constructor(provider: ProviderConfig | PresetName, options: OpenAiAdapterOptions = {}) {
    this.config = resolveProvider(provider)
    this.now = options.now ?? Date.now
    this.env = options.env ?? process.env
  }

  /** The provider name this adapter is registered under. */
  get provider(): string {
    return this.config.name
  }

  /** The model used when a call's `model` is empty. */
  get defaultModel(): string | undefined {
    return this.config.defaultModel
  }

  /**
   * The configured capabilities of `model`; a model that is not configured
   * reports only its id. Its strings are redacted like failure messages.
   */
  resolveModel(model: string): ModelInfo {
    const name = model || this.config.defaultModel || model
    const secrets = new Secrets(this.apiKey().key, this.config.headers)
    const caps = this.config.models[name]
    const info: ModelInfo = { id: secrets.redact(name) }
    if (!caps) return info
    if (caps.contextWindow !== undefined) info.contextWindow = caps.contextWindow
    if (caps.maxOutputTokens !== undefined) info.maxOutputTokens = caps.maxOutputTokens
    if (caps.reasoningEfforts?.length) info.reasoningEfforts = caps.reasoningEfforts.map((effort) => secrets.redact(effort))
    if (caps.defaultReasoningEffort !== undefined) info.defaultReasoningEffort = secrets.redact(caps.defaultReasoningEffort)
    return info
  }

  /** Streams one model call. An arrow property, so it works detached from the instance. */
  readonly stream = (options: GenerateOptions): AsyncIterable<StreamChunk> => this.run(options)

  /**
   * The key (trimmed, as `fetch` would) and a description of where it comes
   * from; `missing` names an unset environment variable, `problem` says why a
   * key cannot be sent.
   */
  private apiKey(): KeyLookup {
    const { apiKey, apiKeyEnv } = this.config
    if (apiKey) return { key: apiKey, source: `the apiKey of provider "${this.provider}"` }
    if (!apiKeyEnv) return {}
    const key = this.env[apiKeyEnv]?.trim()
    if (!key) return { missing: apiKeyEnv }
    return { key, source: `the ${apiKeyEnv} environment variable`, problem: apiKeyProblem(key) }
  }

  /**
   * The call as the consumer sees it: the exchange's chunks with model output
   * and failures redacted (`ContentRedactor`, `Secrets.failure`), held-back
   * output released before the usage and the finish, and anything the
   * exchange throws turned into a redacted `UNKNOWN` finish.
   */
  private async *run(options: GenerateOptions): AsyncGenerator<StreamChunk, void, undefined> {
    const { signal } = options
    if (signal?.aborted) {
      yield abortedFinish()
      return
    }
    const key = this.apiKey()
    const secrets = new Secrets(key.key, this.config.headers)
    const content = new ContentRedactor(secrets)
    try {
      for await (const chunk of this.exchange(options, key, secrets)) {
        if (chunk.type === 'usage' || chunk.type === 'finish') {
          yield* content.flush()
          if (chunk.type === 'finish' && chunk.reason.kind === 'error') {
            yield { type: 'finish', reason: { kind: 'error', failure: secrets.failure(chunk.reason.failure) } }
          } else yield chunk
        } else if (chunk.type === 'redacted-reasoning-delta') {
          // Opaque provider state: passed byte for byte (this API never sends it; the branch keeps the union total).
          yield chunk
        } else {
          const passed = content.pass(chunk)
          if (passed !== undefined) yield passed
        }
      }
    } catch (error) {
      // A throw no branch of the exchange expected: still a finish, never a throw whose message could carry a secret.
      yield* content.flush()
      yield signal?.aborted
        ? abortedFinish()
        : errorFinish(secrets.failure({ code: 'UNKNOWN', message: `the ${this.provider} adapter failed: ${causeOf(error)}` }))
    }
  }

  /** One HTTP exchange with the provider, yielding raw (unredacted) chunks and exactly one finish. */
  private async *exchange(
    options: GenerateOptions,
    key: KeyLookup,
    secrets: Secrets,
  ): AsyncGenerator<StreamChunk, void, undefined> {
    const { signal } = options
    const provider = this.provider
    const model = options.model || this.config.defaultModel
    if (!model) {
      yield errorFinish({
        code: 'INVALID_CONFIG',
        message: `no model given for provider "${provider}", and it has no defaultModel`,
      })
      return
    }
    if (key.missing) {
      yield errorFinish({
        code: 'AUTH',
        message: `the ${key.missing} environment variable is not set; export the API key for provider "${provider}" there, or configure apiKey`,
      })
      return
    }
    // A configuration error, not a network one: no retry would fix it, and nothing is sent.
    if (key.problem) {
      yield errorFinish({ code: 'INVALID_CONFIG', message: `the API key in ${key.source} ${key.problem}` })
      return
    }
    const context: FailureContext = {
      provider,
      model,
      baseUrl: this.config.baseUrl,
      secrets,
      apiKeySource: key.source,
      now: this.now,
    }

    let body: string
    try {
      body = JSON.stringify(requestBody(options, model, this.config.models[model], this.config))
    } catch (error) {
      // `requestBody` refuses unmappable content with an `LlmError`; anything else is a value JSON cannot encode.
      const failure = toLlmFailure(error)
      yield errorFinish(
        failure.code === 'UNKNOWN'
          ? { code: 'BAD_REQUEST', message: `the request for ${provider} cannot be encoded as JSON: ${failure.message}` }
          : failure,
      )
      return
    }

    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(key.key ? { authorization: `Bearer ${key.key}` } : {}),
      ...this.config.headers,
    }
    const exchange = new Exchange(signal, provider, this.config)
    try {
      let response: Response
      try {
        response = await exchange.request(`${this.config.baseUrl}/chat/completions`, { method: 'POST', headers, body })
      } catch (error) {
        const failure = exchange.failure(error, 'connect', secrets)
        yield failure ? errorFinish(failure) : abortedFinish()
        return
      }
      const requestId = response.headers.get('x-request-id') ?? undefined
      if (!response.ok || /json/i.test(response.headers.get('content-type') ?? '')) {
        let text: string
        try {
          text = await exchange.text(response)
        } catch (error) {
          const failure = exchange.failure(error, 'body', secrets, requestId)
          yield failure ? errorFinish(failure) : abortedFinish()
          return
        }
        yield errorFinish(
          response.ok
            ? jsonAnswerFailure(text, requestId, context)
            : httpFailure(response.status, response.headers, text, context),
        )
        return
      }
      yield* this.events(response, exchange, requestId, context)
    } finally {
      exchange.close()
    }
  }

  /** Reads the event stream of a successful response and yields its chunks, then exactly one finish. */
  private async *events(
    response: Response,
    exchange: Exchange,
    requestId: string | undefined,
    context: FailureContext,
  ): AsyncGenerator<StreamChunk, void, undefined> {
    const { provider, secrets } = context
    if (!response.body) {
      yield errorFinish({ code: 'EMPTY_RESPONSE', message: `${provider} answered without a body`, ...withRequestId(requestId) })
      return
    }
    const decoder = new StreamDecoder(provider)
    const out: StreamChunk[] = []
    let done = false
    let broken: LlmFailure | undefined
    let foreign: string | undefined
    const parser = createParser({
      onEvent: (event) => {
        if (done || broken) return
        if (event.data === '[DONE]') {
          done = true
          return
        }
        let payload: unknown
        try {
          payload = JSON.parse(event.data)
        } catch {
          broken = {
            code: 'MALFORMED_STREAM',
            message: `${provider} sent stream data that is not JSON: ${JSON.stringify(secrets.excerpt(event.data, maxSnippet))}`,
            ...withRequestId(requestId),
          }
          return
        }
        const result = decoder.push(payload, out)
        if (result?.kind === 'error') broken = streamErrorFailure(result.payload, requestId, context)
        else if (result?.kind === 'malformed') broken = { code: 'MALFORMED_STREAM', message: result.message, ...withRequestId(requestId) }
      },
      // Lines that are not SSE fields are ignored, as the SSE spec says; the first is kept to explain an empty stream.
      onError: (error) => {
        foreign ??= error.line ?? error.field ?? error.message
      },
    })

    const reader = response.body.getReader()
    const text = new TextDecoder()
    let eof = false
    while (!done && !broken && !eof) {
      let result: ReadResult
      try {
        result = await exchange.read(reader)
      } catch (error) {
        const failure = exchange.failure(error, 'body', secrets, requestId)
        yield failure ? errorFinish(failure) : abortedFinish()
        return
      }
      if (result.done) {
        eof = true
        parser.feed(text.decode())
        parser.reset({ consume: true })
      } else {
        parser.feed(text.decode(result.value, { stream: true }))
      }
      for (let i = 0; i < out.length; i++) yield out[i]!
      out.length = 0
    }

    if (broken) {
      const usage = decoder.usageChunk()
      if (usage) yield usage
      yield errorFinish(broken)
      return
    }
    const end = decoder.end()
    if (end.kind === 'finish') {
      yield* end.chunks
      return
    }
    const hint =
      foreign !== undefined
        ? `; it sent lines that are not server-sent events, first ${JSON.stringify(secrets.excerpt(foreign, maxSnippet))}`
        : ''
    yield errorFinish(
      end.produced
        ? {
            code: 'TRANSPORT',
            message: `${provider}'s stream ended before the answer finished (no finish_reason)${hint}`,
            ...withRequestId(requestId),
          }
        : {
            code: 'EMPTY_RESPONSE',
            message: `${provider} ended the stream without producing anything${hint}`,
            ...withRequestId(requestId),
          },
    )
  }
}

/**
 * A 200 answer with a JSON body: an error object reported that way is
 * classified like one inside a stream; anything else means the server ignored
 * `stream: true`.
 */
function jsonAnswerFailure(text: string, requestId: string | undefined, context: FailureContext): LlmFailure {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  const error = (parsed as { error?: unknown } | null | undefined)?.error
  if (error !== undefined && error !== null) return streamErrorFailure(parsed, requestId, context)
  return {
    code: 'MALFORMED_STREAM',
    message: `${context.provider} answered with JSON instead of an event stream; check that the server supports streaming chat completions (body starts ${JSON.stringify(context.secrets.excerpt(text, maxSnippet))})`,
    ...withRequestId(requestId),
  }
}
