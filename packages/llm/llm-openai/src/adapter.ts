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
import { httpFailure, streamErrorFailure, type FailureContext } from './failures'
import { apiKeyProblem, resolveProvider, type ResolvedProvider } from './provider'
import { requestBody } from './request-body'
import { StreamDecoder } from './stream-decoder'

/** Construction options that are not configuration (`now` for `retry-after` dates, `env` for `apiKeyEnv`). */
export type OpenAiAdapterOptions = HttpAdapterOptions

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
export class OpenAiAdapter extends HttpProviderAdapter<ResolvedProvider> {
  /** Throws `OpenAiConfigError` when the configuration cannot work. */
  constructor(provider: ProviderConfig | PresetName, options: OpenAiAdapterOptions = {}) {
    super(resolveProvider(provider), options)
  }

  protected keyProblem(key: string): string | undefined {
    return apiKeyProblem(key)
  }

  protected body(options: GenerateOptions, model: string): unknown {
    return requestBody(options, model, this.config.models[model], this.config)
  }

  /** `POST <baseUrl>/chat/completions` with the key as a `Bearer` token. */
  protected request(key: string | undefined): ProviderRequest {
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {}
    return { url: `${this.config.baseUrl}/chat/completions`, headers, requestIdHeaders: ['x-request-id'] }
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
        const parsed = eventPayload(event.data, provider, secrets, requestId)
        if (!parsed.ok) {
          broken = parsed.failure
          return
        }
        const result = decoder.push(parsed.payload, out)
        if (result?.kind === 'error') broken = streamErrorFailure(result.payload, requestId, context)
        else if (result?.kind === 'malformed') broken = { code: 'MALFORMED_STREAM', message: result.message, ...withRequestId(requestId) }
      },
      // Lines that are not SSE fields are ignored, as the SSE spec says; the first is kept to explain an empty stream.
      onError: (error) => {
        if (error.type === 'unknown-field' && error.field === 'error' && !done && !broken) {
          // llama.cpp's server (builds of 2025) sent a failure as an `error:` field instead of `data:`.
          broken = streamErrorFailure(streamErrorPayload(error.value ?? ''), requestId, context)
          return
        }
        foreign ??= error.line ?? error.field ?? error.message
      },
    })

    const sink = {
      feed: (text: string) => parser.feed(text),
      end: () => parser.reset({ consume: true }),
      get stopped() {
        return done || broken !== undefined
      },
    }
    if (yield* readEventBody(response, exchange, sink, out, secrets, requestId).batches) return

    if (broken) {
      const usage = decoder.usageChunk()
      yield usage ? [usage, errorFinish(broken)] : [errorFinish(broken)]
      return
    }
    const end = decoder.end()
    if (end.kind === 'finish') {
      yield end.chunks
      return
    }
    const hint =
      foreign !== undefined
        ? `; it sent lines that are not server-sent events, first ${JSON.stringify(secrets.excerpt(foreign, SNIPPET_CHARS))}`
        : ''
    const failure: LlmFailure = end.produced
      ? { code: 'TRANSPORT', message: `${provider}'s stream ended before the answer finished (no finish_reason)${hint}`, ...withRequestId(requestId) }
      : { code: 'EMPTY_RESPONSE', message: `${provider} ended the stream without producing anything${hint}`, ...withRequestId(requestId) }
    yield [errorFinish(failure)]
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
    message: `${context.provider} answered with JSON instead of an event stream; check that the server supports streaming chat completions (body starts ${JSON.stringify(context.secrets.excerpt(text, SNIPPET_CHARS))})`,
    ...withRequestId(requestId),
  }
}
