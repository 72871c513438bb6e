import {
  errorFinish,
  eventPayload,
  HttpProviderAdapter,
  readEventBody,
  SNIPPET_CHARS,
  streamErrorPayload,
  withRequestId,
  type GenerateOptions,
  type HttpAdapterOptions,
  type HttpExchange,
  type LlmFailure,
  type ProviderRequest,
  type StreamChunk,
} from '@deepseek-ai/dsh-llm'
import { createParser } from 'eventsource-parser'
import type { PresetName, ProviderConfig } from './config'
import { errorObject, httpFailure, streamErrorFailure, type FailureContext } from './failures'
import { apiKeyProblem, resolveProvider, type ResolvedProvider } from './provider'
import { requestBody } from './request-body'
import { StreamDecoder } from './stream-decoder'

/** Construction options that are not configuration (`now` for `retry-after` dates, `env` for `apiKeyEnv`). */
export type AnthropicAdapterOptions = HttpAdapterOptions

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
export class AnthropicAdapter extends HttpProviderAdapter<ResolvedProvider> {
  /** Throws `AnthropicConfigError` when the configuration cannot work. */
  constructor(provider: ProviderConfig | PresetName, options: AnthropicAdapterOptions = {}) {
    super(resolveProvider(provider), options)
  }

  protected keyProblem(key: string): string | undefined {
    return apiKeyProblem(key)
  }

  protected body(options: GenerateOptions, model: string): unknown {
    return requestBody(options, model, this.config.models[model], this.config)
  }

  /** `POST <baseUrl>/v1/messages` with the Messages API's own headers: the API version, and the key as `x-api-key`. */
  protected request(key: string | undefined): ProviderRequest {
    const headers = { 'anthropic-version': this.config.apiVersion, ...(key ? { 'x-api-key': key } : {}) }
    return { url: `${this.config.baseUrl}/v1/messages`, headers, requestIdHeaders: ['request-id', 'x-request-id'] }
  }

  protected answerFailure(response: Response, text: string, requestId: string | undefined, context: FailureContext): LlmFailure {
    return response.ok ? jsonAnswerFailure(text, requestId, context) : httpFailure(response.status, response.headers, text, context)
  }

  /**
   * Reads the event stream of a successful response and yields its chunks,
   * then exactly one finish: the chunks of each network read as one batch.
   */
  protected async *eventBatches(
    response: Response,
    exchange: HttpExchange,
    requestId: string | undefined,
    context: FailureContext,
  ): AsyncGenerator<readonly StreamChunk[], void, undefined> {
    const { provider, secrets } = context
    const decoder = new StreamDecoder(provider)
    const out: StreamChunk[] = []
    let stopped = false
    let broken: LlmFailure | undefined
    let foreign: string | undefined
    const parser = createParser({
      onEvent: (event) => {
        if (stopped || broken) return
        if (event.event === 'error') {
          // Read by its name, as the official SDK does: an error whatever the data (JSON without `type`, or plain text).
          broken = streamErrorFailure(streamErrorPayload(event.data), requestId, context)
          return
        }
        const parsed = eventPayload(event.data, provider, secrets, requestId)
        if (!parsed.ok) {
          broken = parsed.failure
          return
        }
        const result = decoder.push(parsed.payload, out)
        if (result?.kind === 'stop') stopped = true
        else if (result?.kind === 'error') broken = streamErrorFailure(result.payload, requestId, context)
        else if (result?.kind === 'malformed') broken = { code: 'MALFORMED_STREAM', message: result.message, ...withRequestId(requestId) }
      },
      // Lines that are not SSE fields are ignored, as the SSE spec says; the first is kept to explain a stream that ends without an answer.
      onError: (error) => {
        foreign ??= error.line ?? error.field ?? error.message
      },
    })
    const sink = {
      feed: (text: string) => parser.feed(text),
      end: () => parser.reset({ consume: true }),
      get stopped() {
        return stopped || broken !== undefined
      },
    }
    if (yield* readEventBody(response, exchange, sink, out, secrets, requestId).batches) return
    if (broken) {
      yield [errorFinish(broken)]
      return
    }
    const finish = decoder.finish()
    if (finish) {
      yield [{ type: 'finish', reason: finish }]
      return
    }
    // A proxy's HTML page or a plain-text error arrives with status 200 as lines that are not events: quote the first.
    const hint =
      foreign !== undefined
        ? `; it sent lines that are not server-sent events, first ${JSON.stringify(secrets.excerpt(foreign, SNIPPET_CHARS))}`
        : ''
    yield [
      errorFinish(
        decoder.produced
          ? { code: 'TRANSPORT', message: `${provider}'s stream ended before the answer finished (no message_stop)${hint}`, ...withRequestId(requestId) }
          : { code: 'EMPTY_RESPONSE', message: `${provider} ended the stream without producing anything${hint}`, ...withRequestId(requestId) },
      ),
    ]
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
    message: `${context.provider} answered with JSON instead of an event stream; check that the server supports streaming messages (body starts ${JSON.stringify(context.secrets.excerpt(text, SNIPPET_CHARS))})`,
    ...withRequestId(requestId),
  }
}
