import {
  classifyHttpFailure,
  FAILURE_DETAIL_CHARS,
  failureWith,
  retryAfterMs as sharedRetryAfterMs,
  type HttpFailureContext,
  type HttpFailureDialect,
  type LlmFailure,
} from '@deepseek-ai/dsh-llm'

/** What a failure message may say about the call, besides the provider's own words. */
export type FailureContext = HttpFailureContext

interface ErrorObject {
  message?: string
  code?: string | number
  type?: string
}

/** The `{ error: { message, type, code } }` object OpenAI-compatible servers answer with, in its common variants. */
function errorObject(value: unknown): ErrorObject | undefined {
  if (value === null || typeof value !== 'object') return undefined
  const record = value as Record<string, unknown>
  const inner = record.error ?? record
  if (typeof inner === 'string') return { message: inner }
  if (inner === null || typeof inner !== 'object') return undefined
  const e = inner as Record<string, unknown>
  // Mistral answers a 422 with its validation detail as an object in `message`: quoted as JSON rather than lost.
  const message =
    ([e.message, e.msg, e.detail, record.message, record.detail].find((m) => typeof m === 'string') as string | undefined) ??
    jsonOf([e.message, record.message].find((m) => m !== null && typeof m === 'object'))
  const code = typeof e.code === 'string' || typeof e.code === 'number' ? e.code : undefined
  const type = typeof e.type === 'string' ? e.type : undefined
  if (message === undefined && code === undefined && type === undefined) return undefined
  return { message, code, type }
}

function jsonOf(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value)
}

function parseBody(text: string): ErrorObject | undefined {
  try {
    return errorObject(JSON.parse(text))
  } catch {
    return undefined
  }
}

// `exceeds the available context size` and `exceed_context_size_error` are llama.cpp's server; `exceeds the maximum
// number of tokens` is Gemini's, `maximum prompt length` xAI's; the two `inputs` phrases are Text Generation
// Inference's (and Together's).
const contextOverflow =
  /context[_ ]length|context[_ ]window|maximum context|too many tokens|prompt is too long|input is too long|reduce the length|exceeds the model|exceeds? the available context size|exceed_context_size|exceeds the maximum number of tokens|maximum prompt length|`inputs` tokens \+ `max_new_tokens` must be|`inputs` must have less than/i
const quotaExhausted = /insufficient[_ ]quota|insufficient[_ ]balance|billing|exceeded your current quota/i

function describe(error: ErrorObject | undefined, fallback: string): string {
  const words = [error?.message, error?.code !== undefined ? `code ${error.code}` : undefined, error?.type]
    .filter((w) => w !== undefined && w !== '')
    .join('; ')
  return words || fallback
}

/** A version segment in a URL path: `/v1`, `/v1beta`, `/v4/`. */
const versionSegment = /\/v\d+(?:alpha\d*|beta\d*)?(?:\/|$)/i

/**
 * The hint for a 404 when the base URL's path has no version segment: most
 * OpenAI-compatible servers (vLLM, Ollama, llama.cpp, LM Studio, OpenAI) serve
 * the API under `/v1`, and a base URL without it 404s on every request. Not
 * given when the provider's words are about a model (a 404 for an unknown
 * model is not a path problem).
 */
function pathHint(baseUrl: string, words: string): string {
  if (/model/i.test(words)) return ''
  let path: string
  try {
    path = new URL(baseUrl).pathname
  } catch {
    return ''
  }
  if (versionSegment.test(path)) return ''
  return ` The base URL ${baseUrl} has no /v1 in its path, where most OpenAI-compatible servers serve the API: did you mean ${baseUrl}/v1?`
}

/**
 * How OpenAI-compatible servers answer a failed request, for dsh-llm's
 * `classifyHttpFailure`: the `{ error: { message, type, code } }` body, the
 * `x-request-id` and `retry-after-ms` headers, quota exhaustion sent as a 429
 * (billing: waiting does not help), and the `/v1` hint of a 404.
 */
const dialect: HttpFailureDialect = {
  readError(body) {
    const error = parseBody(body)
    if (!error) return undefined
    return { said: describe(error, body), words: `${error.message ?? ''} ${error.code ?? ''} ${error.type ?? ''}` }
  },
  requestIdHeaders: ['x-request-id'],
  millisecondsHeader: 'retry-after-ms',
  contextOverflow,
  isBilling: (status, words) => status === 402 || (status === 429 && quotaExhausted.test(words)),
  billingAdvice: '. Top up or change the account; retrying will not help.',
  notFound: ({ words, http, context }) =>
    `${context.provider} rejected the request for ${context.model} (${http}).${pathHint(context.baseUrl, words)}`,
}

/**
 * Parses the retry hint of a 429/503 answer: `retry-after-ms` (OpenAI) wins,
 * then `retry-after` in seconds or as an HTTP date. Returns whole
 * milliseconds, never negative, or `undefined` without a usable hint.
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  return sharedRetryAfterMs(headers, now, dialect)
}

const IMAGE_HINT =
  'Its image limits are lower than what the request carried: set images for this provider (maxImages, maxImageBytes, maxTotalBytes, or mediaTypes: [] if it takes no images), and the request leaves out what does not fit.'

/**
 * Classifies a non-2xx answer: 401/403 `AUTH`; 402 and quota exhaustion (also
 * when sent as 429) `AUTH`, since waiting does not help; 429 `RATE_LIMIT`;
 * 408 `TIMEOUT`; 5xx `SERVER`; a 4xx that names the context length (or a 413)
 * `CONTEXT_OVERFLOW`; any other 4xx `BAD_REQUEST` (a 404 from a base URL
 * without `/v1` suggests adding it; a refusal that names `stream_options` says
 * to set `streamUsage: false`, one that names images to set `images`). The provider's message is
 * kept, redacted and shortened; `retryAfterMs` and `requestId` come from the
 * headers.
 */
export function httpFailure(status: number, headers: Headers, body: string, context: FailureContext): LlmFailure {
  const failure = classifyHttpFailure(status, headers, body, context, dialect)
  // Mistral (and other strict servers) refuse the `stream_options` that `streamUsage` adds, on every request.
  if (failure.code === 'BAD_REQUEST' && /stream_options/.test(body)) {
    return { ...failure, message: `${failure.message} It does not accept stream_options: set streamUsage: false for this provider.` }
  }
  // A server's own image limits (vLLM's --limit-mm-per-prompt, a text-only model): the history repeats the images in every
  // later request, so only configuration ends it.
  if (failure.code === 'BAD_REQUEST' && /image/i.test(body)) {
    return { ...failure, message: `${failure.message} ${IMAGE_HINT}` }
  }
  return failure
}

/**
 * Classifies an `error` object sent inside a successful stream (`data:
 * {"error": …}`). A numeric code is read as an HTTP status; otherwise the
 * code, type and message are matched against rate limits, context length and
 * bad requests, and anything else is a `SERVER` failure (the provider broke
 * off an answer it had accepted).
 */
export function streamErrorFailure(value: unknown, requestId: string | undefined, context: FailureContext): LlmFailure {
  const error = errorObject(value) ?? {}
  const said = context.secrets.excerpt(describe(error, 'no details'), FAILURE_DETAIL_CHARS)
  const message = `${context.provider} sent an error in the stream: ${said}`
  const extra = { requestId }
  if (typeof error.code === 'number' && error.code >= 400 && error.code < 600) {
    const classified = httpFailure(error.code, new Headers(), JSON.stringify({ error }), context)
    return failureWith(classified.code, message, { requestId, status: error.code })
  }
  const words = `${error.message ?? ''} ${error.code ?? ''} ${error.type ?? ''}`
  if (contextOverflow.test(words)) return failureWith('CONTEXT_OVERFLOW', message, extra)
  if (quotaExhausted.test(words)) return failureWith('AUTH', message, extra)
  if (/rate[_ ]limit/i.test(words)) return failureWith('RATE_LIMIT', message, extra)
  if (/invalid[_ ]request/i.test(words)) return failureWith('BAD_REQUEST', message, extra)
  return failureWith('SERVER', message, extra)
}
