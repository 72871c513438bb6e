import type { GenerateOptions, LlmAdapter, ModelInfo } from '../adapter'
import type { LlmFailure } from '../failure'
import { Secrets } from '../redact'
import type { StreamChunk } from '../stream'
import { lookUpApiKey, preflightCall, type ApiKeyLookup, type ApiKeySettings } from './api-key'
import type { HttpDeadlines, HttpExchange } from './exchange'
import type { HttpFailureContext } from './http-failure'
import { modelInfoOf, type ModelCapabilities } from './model-info'
import { BatchedChunks, onlyBatch } from './batched-chunks'
import { errorFinish, interruptOf, jsonRequestBody, redactedBatches, streamExchange, type RedactedCall } from './stream-exchange'

/** Construction options of an HTTP adapter that are not configuration. */
export interface HttpAdapterOptions {
  /** The clock used to turn a `retry-after` HTTP date into milliseconds. Defaults to `Date.now`. */
  now?: () => number
  /** Where `apiKeyEnv` is looked up, at each call. Defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>
}

/** What `HttpProviderAdapter` reads of an adapter's resolved provider config. */
export interface HttpProviderSettings extends ApiKeySettings, HttpDeadlines {
  /** The provider name calls use. */
  readonly name: string
  /** The API root, without a trailing slash or userinfo. */
  readonly baseUrl: string
  /** The model used when a call names none. */
  readonly defaultModel?: string
  readonly models: Readonly<Record<string, ModelCapabilities>>
  /** Extra headers sent with every request; the credential-looking ones are redacted from output. */
  readonly headers: Readonly<Record<string, string>>
}

/** Where one call goes and how: the provider's endpoint, its own headers and its request id headers. */
export interface ProviderRequest {
  url: string
  /**
   * The provider's own headers (the key in its header, an API version). The
   * request sends `content-type: application/json` and `accept:
   * text/event-stream` first, then these, then the config's `headers`, which
   * may override any of them.
   */
  headers: Record<string, string>
  requestIdHeaders: readonly string[]
}

/**
 * The part of an `LlmAdapter` that every HTTP provider adapter shares: the
 * registration getters, `resolveModel`, and `stream`, which, at the stream's
 * first pull, looks up the API key, refuses a call that cannot be sent
 * (`preflightCall`), encodes the body (`jsonRequestBody`) and runs one
 * `streamExchange`, everything inside the redaction of `redactedStream`. A
 * subclass supplies only its provider's differences: the key check, the
 * body, the endpoint and headers, how an error answer is classified, and how
 * its event stream turns into batches of chunks (`eventBatches`).
 *
 * The stream hands out the chunks of one network read as one batch: its
 * `next()` answers the first chunk of each read with a promise and the rest
 * of that read's chunks as plain results (the `LlmAdapter` protocol's chunks
 * at hand; see `BatchedChunks`). A subclass's `eventBatches` yields those
 * batches (`readEventBody(…).batches`); the base wraps them.
 *
 * Contract (the adapters' own): `stream` never throws for anything the
 * provider or the network does; every failure arrives as the final `finish`
 * chunk of kind `error`, the caller's abort as `{ kind: 'aborted' }`, and
 * nothing yielded carries a credential. `stream()` itself does no work: the
 * key lookup and the setup run at the first pull, so that a throw there (a
 * subclass's `keyProblem` or `request`) arrives as a redacted `UNKNOWN`
 * finish, and a stream that is never read, or whose call was aborted before
 * its first pull, looks nothing up and builds no body.
 */
export abstract class HttpProviderAdapter<Settings extends HttpProviderSettings> implements LlmAdapter {
  /** The provider configuration with preset and defaults applied. */
  readonly config: Settings
  protected readonly now: () => number
  protected readonly env: Readonly<Record<string, string | undefined>>
  /** The secrets known without a lookup (the configured key, the credential headers): a call's until its key is found. */
  private readonly configSecrets: Secrets

  protected constructor(config: Settings, options: HttpAdapterOptions = {}) {
    this.config = config
    this.now = options.now ?? Date.now
    this.env = options.env ?? process.env
    this.configSecrets = new Secrets(config.apiKey, config.headers)
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
   * The configured capabilities of `model` (a model that is not configured
   * reports only its id), redacted like failure messages. It needs only the
   * key's value, so `keyProblem` is not asked.
   */
  resolveModel(model: string): ModelInfo {
    const name = model || this.config.defaultModel || model
    return modelInfoOf(name, this.config.models[name], new Secrets(this.keyValue(), this.config.headers))
  }

  /**
   * Streams one model call, a network read's chunks at a time (see
   * `BatchedChunks`: `await` each `next()`). The API key is looked up at the
   * first pull, not when the stream is made. An arrow property, so it works
   * detached from the instance.
   */
  readonly stream = (options: GenerateOptions): AsyncIterable<StreamChunk> => this.run(options)

  /** Why a key from the environment cannot be sent in a header, as a phrase; `undefined` when it can. */
  protected abstract keyProblem(key: string): string | undefined

  /** The request body of one call as a JSON value; may throw an `LlmError` to refuse content it cannot map. */
  protected abstract body(options: GenerateOptions, model: string): unknown

  /** The endpoint, headers and request id headers of a call with this key. */
  protected abstract request(key: string | undefined): ProviderRequest

  /** The failure of an answer that is not an event stream (a non-2xx status, or a 2xx with a JSON body). */
  protected abstract answerFailure(response: Response, text: string, requestId: string | undefined, context: HttpFailureContext): LlmFailure

  /**
   * The chunks of an event-stream answer, one batch per network read, ending
   * with exactly one finish: pass `readEventBody(…).batches` on with `yield*`
   * (a batch per read), then yield the final chunks as one batch. The base
   * hands each batch out through `BatchedChunks` (the first chunk of a batch
   * with a promise, the rest plainly); a batch is never changed after it is
   * yielded. An adapter that decodes one chunk at a time yields one-chunk
   * batches.
   */
  protected abstract eventBatches(
    response: Response,
    exchange: HttpExchange,
    requestId: string | undefined,
    context: HttpFailureContext,
  ): AsyncGenerator<readonly StreamChunk[], void, undefined>

  /** The call's key and where it comes from (`lookUpApiKey` with this adapter's `keyProblem`). */
  protected apiKey(): ApiKeyLookup {
    return lookUpApiKey(this.config, this.provider, this.env, (key) => this.keyProblem(key))
  }

  /** The key's value alone (for redaction), found as `apiKey` finds it but without `keyProblem`'s check. */
  private keyValue(): string | undefined {
    return lookUpApiKey(this.config, this.provider, this.env, unchecked).key
  }

  private run(options: GenerateOptions): BatchedChunks {
    const call: OpenedCall = { secrets: this.configSecrets, raw: undefined, open: () => this.open(options, call) }
    // A `return()` while a pull is pending interrupts the exchange the first pull made (see `streamExchange`).
    return new BatchedChunks(redactedBatches(call, options.signal, this.provider), () => interruptOf(call.raw)?.())
  }

  /**
   * Sets a call up on its first pull, inside the redaction (see
   * `RedactedCall`): the key lookup, whose key then redacts everything after
   * it, then the exchange.
   */
  private open(options: GenerateOptions, call: OpenedCall): AsyncIterable<StreamChunk> {
    let key: ApiKeyLookup
    try {
      key = this.apiKey()
    } catch (error) {
      // A throw of the lookup (a subclass's `keyProblem`) may quote the key: redact it with the key, found without the check.
      call.secrets = new Secrets(this.keyValue(), this.config.headers)
      throw new Error('its API key lookup threw', { cause: error })
    }
    const secrets = new Secrets(key.key, this.config.headers)
    call.secrets = secrets
    const raw = this.exchange(options, key, secrets)
    call.raw = raw
    return raw
  }

  /**
   * One HTTP exchange with the provider, yielding raw (unredacted) chunks and
   * exactly one finish; made by `open` at the stream's first pull (never for
   * a call aborted before it, see `redactedBatches`).
   */
  private exchange(options: GenerateOptions, key: ApiKeyLookup, secrets: Secrets): AsyncIterable<StreamChunk> {
    const provider = this.provider
    // A configuration error, not a network one: no retry would fix it, and nothing is sent.
    const call = preflightCall(provider, options.model || this.config.defaultModel, key)
    if (!call.ok) return new BatchedChunks(onlyBatch([errorFinish(call.failure)]))
    const { model } = call
    const context: HttpFailureContext = { provider, model, baseUrl: this.config.baseUrl, secrets, apiKeySource: key.source, now: this.now }
    const encoded = jsonRequestBody(provider, () => this.body(options, model))
    if (!encoded.ok) return new BatchedChunks(onlyBatch([errorFinish(encoded.failure)]))
    const request = this.request(key.key)
    const headers = { 'content-type': 'application/json', accept: 'text/event-stream', ...request.headers, ...this.config.headers }
    return streamExchange({
      url: request.url,
      headers,
      requestIdHeaders: request.requestIdHeaders,
      signal: options.signal,
      provider,
      deadlines: this.config,
      secrets,
      body: encoded.body,
      answerFailure: (response, text, requestId) => this.answerFailure(response, text, requestId, context),
      events: (response, exchange, requestId) => new BatchedChunks(this.eventBatches(response, exchange, requestId, context)),
    })
  }
}

/** A call of `HttpProviderAdapter.stream`: what `redactedBatches` reads, and the raw stream its first pull made (to interrupt). */
interface OpenedCall extends RedactedCall {
  raw: AsyncIterable<StreamChunk> | undefined
}

/** A key check that finds nothing wrong: for lookups that only need the key's value. */
const unchecked = (): undefined => undefined
