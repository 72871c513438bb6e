import {
  abortedFinish,
  errorFinish,
  jsonRequestBody,
  lookUpApiKey,
  preflightCall,
  readEventBody,
  redactedStream,
  streamExchange,
  type ApiKeyLookup,
  type GenerateOptions,
  type HttpExchange,
  type LlmAdapter,
  type LlmFailure,
  type ModelInfo,
  type StreamChunk,
} from '@deepseek-ai/dsh-llm'
import { createParser } from 'eventsource-parser'
import type { PresetName, ProviderConfig } from './config'
import { errorObject, httpFailure, streamErrorFailure, type FailureContext } from './failures'
import { apiKeyProblem, resolveProvider, type ResolvedProvider } from './provider'
import { Secrets } from './redact'
import { requestBody } from './request-body'
import { StreamDecoder } from './stream-decoder'

/** Construction options that are not configuration. */
export interface AnthropicAdapterOptions {
  /** The clock used to turn a `retry-after` HTTP date into milliseconds. Defaults to `Date.now`. */
  now?: () => number
  /** Where `apiKeyEnv` is looked up, at each call. Defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>
}

const withRequestId = (requestId: string | undefined) => (requestId ? { requestId } : {})
/** How much of a malformed payload a failure message quotes. */
const maxSnippet = 200

/**
 * An `LlmAdapter` for one Anthropic Messages API endpoint (Anthropic itself,
 * DeepSeek's Anthropic-compatible endpoint, a gateway), streaming over Node's
 * `fetch` with server-sent events.
 *
 * Contract: `stream` never throws for anything the provider or the network
 * does. Every failure, a refused request body included, arrives as the final
 * `finish` chunk of kind `error` with a classified `LlmFailure`; the caller's
 * abort arrives as `{ kind: 'aborted' }` and closes the connection, as does a
 * consumer that stops reading. Nothing it yields carries a credential:
 * failure messages and request ids lose the key, credential header values,
 * key-shaped strings and URL userinfo; model text loses the exact key and
 * credential header values, even split across deltas. Opaque state (signatures,
 * redacted thinking) passes byte for byte.
 */
export class AnthropicAdapter implements LlmAdapter {
  /** The provider configuration with preset and defaults applied. */
  readonly config: ResolvedProvider
  private readonly now: () => number
  private readonly env: Readonly<Record<string, string | undefined>>

  /** Throws `AnthropicConfigError` when the configuration cannot work. */
  constructor(provider: ProviderConfig | PresetName, options: AnthropicAdapterOptions = {}) {
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

  /** The configured capabilities of `model`; a model that is not configured reports only its id. */
  resolveModel(model: string): ModelInfo {
    const name = model || this.config.defaultModel || model
    const caps = this.config.models[name]
    const info: ModelInfo = { id: new Secrets(this.apiKey().key, this.config.headers).redact(name) }
    if (!caps) return info
    if (caps.contextWindow !== undefined) info.contextWindow = caps.contextWindow
    if (caps.maxOutputTokens !== undefined) info.maxOutputTokens = caps.maxOutputTokens
    if (caps.reasoningEfforts?.length) info.reasoningEfforts = [...caps.reasoningEfforts]
    if (caps.defaultReasoningEffort !== undefined) info.defaultReasoningEffort = caps.defaultReasoningEffort
    return info
  }

  /** Streams one model call. An arrow property, so it works detached from the instance. */
  readonly stream = (options: GenerateOptions): AsyncIterable<StreamChunk> => this.run(options)

  /** The call's key and where it comes from (dsh-llm's `lookUpApiKey`, with this adapter's key check). */
  private apiKey(): ApiKeyLookup {
    return lookUpApiKey(this.config, this.provider, this.env, apiKeyProblem)
  }

  /**
   * The exchange's chunks through dsh-llm's `redactedStream`: model output redacted across delta
   * boundaries, failures redacted, held-back output released before the usage and the finish, and
   * anything the exchange throws turned into a redacted finish.
   */
  private async *run(options: GenerateOptions): AsyncGenerator<StreamChunk, void, undefined> {
    const { signal } = options
    if (signal?.aborted) {
      yield abortedFinish()
      return
    }
    const key = this.apiKey()
    const secrets = new Secrets(key.key, this.config.headers)
    yield* redactedStream(this.exchange(options, key, secrets), secrets, signal, this.provider)
  }

  /** One HTTP exchange, yielding raw (unredacted) chunks and exactly one finish. */
  private async *exchange(options: GenerateOptions, key: ApiKeyLookup, secrets: Secrets): AsyncGenerator<StreamChunk, void, undefined> {
    const provider = this.provider
    const call = preflightCall(provider, options.model || this.config.defaultModel, key)
    if (!call.ok) {
      yield errorFinish(call.failure)
      return
    }
    const { model } = call
    const context: FailureContext = { provider, model, baseUrl: this.config.baseUrl, secrets, apiKeySource: key.source, now: this.now }
    const encoded = jsonRequestBody(provider, () => requestBody(options, model, this.config.models[model], this.config))
    if (!encoded.ok) {
      yield errorFinish(encoded.failure)
      return
    }
    // The Messages API's own headers: the key as `x-api-key`, and the API version.
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'anthropic-version': this.config.apiVersion,
      ...(key.key ? { 'x-api-key': key.key } : {}),
      ...this.config.headers,
    }
    yield* streamExchange({
      signal: options.signal,
      provider,
      deadlines: this.config,
      secrets,
      url: `${this.config.baseUrl}/v1/messages`,
      headers,
      body: encoded.body,
      requestIdHeaders: ['request-id', 'x-request-id'],
      answerFailure: (response, text, requestId) =>
        response.ok ? jsonAnswerFailure(text, requestId, context) : httpFailure(response.status, response.headers, text, context),
      events: (response, exchange, requestId) => this.events(response, exchange, requestId, context),
    })
  }

  /** Reads the event stream of a successful response and yields its chunks, then exactly one finish. */
  private async *events(response: Response, exchange: HttpExchange, requestId: string | undefined, context: FailureContext): AsyncGenerator<StreamChunk, void, undefined> {
    const { provider, secrets } = context
    if (!response.body) {
      yield errorFinish({ code: 'EMPTY_RESPONSE', message: `${provider} answered without a body`, ...withRequestId(requestId) })
      return
    }
    const decoder = new StreamDecoder(provider)
    const out: StreamChunk[] = []
    let stopped = false
    let broken: LlmFailure | undefined
    const parser = createParser({
      onEvent: (event) => {
        if (stopped || broken) return
        let payload: unknown
        try {
          payload = JSON.parse(event.data)
        } catch {
          broken = { code: 'MALFORMED_STREAM', message: `${provider} sent stream data that is not JSON: ${JSON.stringify(secrets.excerpt(event.data, maxSnippet))}`, ...withRequestId(requestId) }
          return
        }
        const result = decoder.push(payload, out)
        if (result?.kind === 'stop') stopped = true
        else if (result?.kind === 'error') broken = streamErrorFailure(result.payload, requestId, context)
        else if (result?.kind === 'malformed') broken = { code: 'MALFORMED_STREAM', message: result.message, ...withRequestId(requestId) }
      },
    })
    const sink = {
      feed: (text: string) => parser.feed(text),
      end: () => parser.reset({ consume: true }),
      get stopped() {
        return stopped || broken !== undefined
      },
    }
    if (yield* readEventBody(response.body, exchange, sink, out, secrets, requestId)) return
    if (broken) {
      yield errorFinish(broken)
      return
    }
    const finish = decoder.finish()
    if (finish) {
      yield { type: 'finish', reason: finish }
      return
    }
    yield errorFinish(
      decoder.produced
        ? { code: 'TRANSPORT', message: `${provider}'s stream ended before the answer finished (no message_stop)`, ...withRequestId(requestId) }
        : { code: 'EMPTY_RESPONSE', message: `${provider} ended the stream without producing anything`, ...withRequestId(requestId) },
    )
  }
}

/** A 200 answer with a JSON body: an error object is classified like a stream's; anything else means the server ignored `stream: true`. */
function jsonAnswerFailure(text: string, requestId: string | undefined, context: FailureContext): LlmFailure {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if ((parsed as { type?: unknown } | undefined)?.type === 'error' && errorObject(parsed)) return streamErrorFailure(parsed, requestId, context)
  return {
    code: 'MALFORMED_STREAM',
    message: `${context.provider} answered with JSON instead of an event stream; check that the server supports streaming messages (body starts ${JSON.stringify(context.secrets.excerpt(text, maxSnippet))})`,
    ...withRequestId(requestId),
  }
}
