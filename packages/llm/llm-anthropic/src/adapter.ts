import { toLlmFailure, type GenerateOptions, type LlmAdapter, type LlmFailure, type ModelInfo, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { createParser } from 'eventsource-parser'
import type { PresetName, ProviderConfig } from './config'
import { causeOf, Exchange, type ReadResult } from './exchange'
import { errorObject, httpFailure, streamErrorFailure, type FailureContext } from './failures'
import { apiKeyProblem, resolveProvider, type ResolvedProvider } from './provider'
import { ContentRedactor, Secrets } from './redact'
import { requestBody } from './request-body'
import { StreamDecoder } from './stream-decoder'

/** Construction options that are not configuration. */
export interface AnthropicAdapterOptions {
  /** The clock used to turn a `retry-after` HTTP date into milliseconds. Defaults to `Date.now`. */
  now?: () => number
  /** Where `apiKeyEnv` is looked up, at each call. Defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>
}

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
 * credential header values (within one delta). Opaque state (signatures,
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

  private apiKey(): KeyLookup {
    const { apiKey, apiKeyEnv } = this.config
    if (apiKey) return { key: apiKey, source: `the apiKey of provider "${this.provider}"` }
    if (!apiKeyEnv) return {}
    const key = this.env[apiKeyEnv]?.trim()
    if (!key) return { missing: apiKeyEnv }
    return { key, source: `the ${apiKeyEnv} environment variable`, problem: apiKeyProblem(key) }
  }

  /**
   * The exchange's chunks with model output redacted across delta boundaries (`ContentRedactor`),
   * failures redacted (`Secrets.failure`), held-back output released before the usage and the
   * finish, and anything the exchange throws turned into a redacted finish.
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
          // Text held back as a possible credential start goes before the usage and the finish.
          yield* content.flush()
          if (chunk.type === 'finish' && chunk.reason.kind === 'error') yield errorFinish(secrets.failure(chunk.reason.failure))
          else yield chunk
        } else if (chunk.type === 'redacted-reasoning-delta') yield chunk
        else {
          const passed = content.pass(chunk)
          if (passed !== undefined) yield passed
        }
      }
    } catch (error) {
      // A throw no branch of the exchange expected: still a finish, never a throw whose message could carry a secret.
      yield* content.flush()
      yield signal?.aborted ? abortedFinish() : errorFinish(secrets.failure({ code: 'UNKNOWN', message: `the ${this.provider} adapter failed: ${causeOf(error)}` }))
    }
  }

  /** One HTTP exchange, yielding raw (unredacted) chunks and exactly one finish. */
  private async *exchange(options: GenerateOptions, key: KeyLookup, secrets: Secrets): AsyncGenerator<StreamChunk, void, undefined> {
    const provider = this.provider
    const model = options.model || this.config.defaultModel
    if (!model) {
      yield errorFinish({ code: 'INVALID_CONFIG', message: `no model given for provider "${provider}", and it has no defaultModel` })
      return
    }
    if (key.missing) {
      yield errorFinish({ code: 'AUTH', message: `the ${key.missing} environment variable is not set; export the API key for provider "${provider}" there, or configure apiKey` })
      return
    }
    if (key.problem) {
      yield errorFinish({ code: 'INVALID_CONFIG', message: `the API key in ${key.source} ${key.problem}` })
      return
    }
    const context: FailureContext = { provider, model, baseUrl: this.config.baseUrl, secrets, apiKeySource: key.source, now: this.now }
    let body: string
    try {
      body = JSON.stringify(requestBody(options, model, this.config.models[model], this.config))
    } catch (error) {
      // `requestBody` refuses unmappable content with an `LlmError`; anything else is a value JSON cannot encode.
      const failure = toLlmFailure(error)
      yield errorFinish(failure.code === 'UNKNOWN' ? { code: 'BAD_REQUEST', message: `the request for ${provider} cannot be encoded as JSON: ${failure.message}` } : failure)
      return
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'anthropic-version': this.config.apiVersion,
      ...(key.key ? { 'x-api-key': key.key } : {}),
      ...this.config.headers,
    }
    const exchange = new Exchange(options.signal, provider, this.config)
    try {
      let response: Response
      try {
        response = await exchange.request(`${this.config.baseUrl}/v1/messages`, { method: 'POST', headers, body })
      } catch (error) {
        const failure = exchange.failure(error, 'connect', secrets)
        yield failure ? errorFinish(failure) : abortedFinish()
        return
      }
      const requestId = response.headers.get('request-id') ?? response.headers.get('x-request-id') ?? undefined
      if (!response.ok || /json/i.test(response.headers.get('content-type') ?? '')) {
        let text: string
        try {
          text = await exchange.text(response)
        } catch (error) {
          const failure = exchange.failure(error, 'body', secrets, requestId)
          yield failure ? errorFinish(failure) : abortedFinish()
          return
        }
        yield errorFinish(response.ok ? jsonAnswerFailure(text, requestId, context) : httpFailure(response.status, response.headers, text, context))
        return
      }
      yield* this.events(response, exchange, requestId, context)
    } finally {
      exchange.close()
    }
  }

  /** Reads the event stream of a successful response and yields its chunks, then exactly one finish. */
  private async *events(response: Response, exchange: Exchange, requestId: string | undefined, context: FailureContext): AsyncGenerator<StreamChunk, void, undefined> {
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
    const reader = response.body.getReader()
    const text = new TextDecoder()
    let eof = false
    while (!stopped && !broken && !eof) {
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
      } else parser.feed(text.decode(result.value, { stream: true }))
      for (let i = 0; i < out.length; i++) yield out[i]!
      out.length = 0
    }
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
